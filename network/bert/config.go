package bert

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/network/nli"
)

// Config is what genlens reads of a Hugging Face BERT config.json.
type Config struct {
	VocabSize    int     `json:"vocab_size"`
	Hidden       int     `json:"hidden_size"`
	Heads        int     `json:"num_attention_heads"`
	Intermediate int     `json:"intermediate_size"`
	Layers       int     `json:"num_hidden_layers"`
	MaxPositions int     `json:"max_position_embeddings"`
	TypeVocab    int     `json:"type_vocab_size"`
	Eps          float64 `json:"layer_norm_eps"`
	Act          string  `json:"hidden_act"`
	PosType      string  `json:"position_embedding_type"`
	// ID2Label names the classifier's outputs (a sequence classifier).
	ID2Label map[string]string `json:"id2label"`
}

// Bounds on a config, so that a hostile one cannot make genlens allocate
// what no released BERT needs (BERT-large is 1024 wide, 24 layers).
const (
	maxHidden    = 8192
	maxLayers    = 128
	maxVocab     = 1 << 21
	maxPositions = 1 << 14
)

// ReadConfig reads and checks a config.json.
func ReadConfig(path string) (Config, error) {
	var c Config
	st, err := os.Stat(path)
	if err != nil {
		return c, &fault.InputError{File: path, Msg: "cannot read the model's config", Err: err}
	}
	if st.Size() > 1<<20 {
		return c, &fault.InputError{File: path, Msg: fmt.Sprintf("%d bytes, more than a config.json has", st.Size())}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return c, &fault.InputError{File: path, Msg: "cannot read the model's config", Err: err}
	}
	c.Eps = 1e-12
	c.Act = "gelu"
	if err := json.Unmarshal(data, &c); err != nil {
		return c, &fault.InputError{File: path, Msg: "not a config.json: " + fault.Printable(err.Error(), 200)}
	}
	return c, c.validate(path)
}

func (c Config) validate(path string) error {
	bad := func(key, format string, a ...any) error {
		return &fault.InputError{File: path, Key: key, Msg: fmt.Sprintf(format, a...)}
	}
	for _, f := range []struct {
		key    string
		v, max int
	}{
		{"vocab_size", c.VocabSize, maxVocab},
		{"hidden_size", c.Hidden, maxHidden},
		{"num_attention_heads", c.Heads, maxHidden},
		{"intermediate_size", c.Intermediate, 4 * maxHidden},
		{"num_hidden_layers", c.Layers, maxLayers},
		{"max_position_embeddings", c.MaxPositions, maxPositions},
		{"type_vocab_size", c.TypeVocab, 1 << 10},
	} {
		if f.v < 1 || f.v > f.max {
			return bad(f.key, "is %d, want 1 to %d", f.v, f.max)
		}
	}
	// A count that divides the width but is not the checkpoint's cannot
	// be told from the weights: no tensor has a per-head dimension
	// (transformer.CheckHeads).
	if c.Hidden%c.Heads != 0 {
		return bad("num_attention_heads", "%d does not divide hidden_size %d", c.Heads, c.Hidden)
	}
	if !(c.Eps > 0 && c.Eps < 1) {
		return bad("layer_norm_eps", "is %g", c.Eps)
	}
	if c.Act != "gelu" {
		return bad("hidden_act", "is %q; genlens runs BERTs with the exact GELU", fault.Printable(c.Act, 40))
	}
	if c.PosType != "" && c.PosType != "absolute" {
		return bad("position_embedding_type", "is %q; genlens runs absolute positions", fault.Printable(c.PosType, 40))
	}
	return nil
}

// labelOrder maps the classifier's outputs to nli's labels by their
// names in id2label (any case), refusing anything but contradiction,
// neutral and entailment in some order.
func (c Config) labelOrder(path string) ([3]nli.Label, error) {
	var order [3]nli.Label
	if len(c.ID2Label) != 3 {
		return order, &fault.InputError{File: path, Key: "id2label", Msg: fmt.Sprintf("has %d labels; an NLI model has contradiction, neutral and entailment", len(c.ID2Label))}
	}
	seen := map[nli.Label]bool{}
	for i := range 3 {
		name, ok := c.ID2Label[fmt.Sprint(i)]
		if !ok {
			return order, &fault.InputError{File: path, Key: "id2label", Msg: fmt.Sprintf("has no label %d", i)}
		}
		l, ok := nli.ParseLabel(name)
		if !ok {
			return order, &fault.InputError{File: path, Key: "id2label", Msg: fmt.Sprintf("label %d is %q; an NLI model has contradiction, neutral and entailment", i, fault.Printable(name, 40))}
		}
		if seen[l] {
			return order, &fault.InputError{File: path, Key: "id2label", Msg: fmt.Sprintf("names %s twice", l)}
		}
		seen[l] = true
		order[i] = l
	}
	return order, nil
}
