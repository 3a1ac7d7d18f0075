package deberta

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/network/nli"
)

// Config is the part of a DeBERTa config.json the forward pass reads.
type Config struct {
	Hidden, Layers, Heads, Intermediate int
	MaxPositions, MaxRelative           int
	Vocab, TypeVocab                    int
	PositionBiased                      bool
	Eps                                 float64
	// Labels maps the classifier's rows to NLI labels.
	Labels [3]nli.Label
}

type rawConfig struct {
	ModelType            string            `json:"model_type"`
	HiddenSize           int               `json:"hidden_size"`
	NumHiddenLayers      int               `json:"num_hidden_layers"`
	NumAttentionHeads    int               `json:"num_attention_heads"`
	IntermediateSize     int               `json:"intermediate_size"`
	HiddenAct            string            `json:"hidden_act"`
	PoolerHiddenAct      *string           `json:"pooler_hidden_act"`
	PoolerHiddenSize     *int              `json:"pooler_hidden_size"`
	EmbeddingSize        *int              `json:"embedding_size"`
	MaxPositionEmbed     int               `json:"max_position_embeddings"`
	MaxRelativePositions *int              `json:"max_relative_positions"`
	RelativeAttention    bool              `json:"relative_attention"`
	PosAttType           json.RawMessage   `json:"pos_att_type"`
	PositionBiasedInput  *bool             `json:"position_biased_input"`
	TypeVocabSize        int               `json:"type_vocab_size"`
	LayerNormEps         *float64          `json:"layer_norm_eps"`
	VocabSize            int               `json:"vocab_size"`
	TalkingHead          bool              `json:"talking_head"`
	ID2Label             map[string]string `json:"id2label"`
}

// maxConfigBytes bounds config.json, read whole.
const maxConfigBytes = 1 << 20

// LoadConfig reads a DeBERTa config.json. It refuses what the forward
// pass does not compute (talking heads, a projected embedding, an
// activation other than GELU, attention without c2p and p2c) and labels
// that do not name contradiction, neutral and entailment.
func LoadConfig(path string) (Config, error) {
	st, err := os.Stat(path)
	if err != nil {
		return Config{}, &fault.InputError{File: path, Msg: "cannot read config", Err: err}
	}
	if st.Size() > maxConfigBytes {
		return Config{}, &fault.InputError{File: path, Msg: fmt.Sprintf("has %d bytes, too large for a config.json", st.Size())}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return Config{}, &fault.InputError{File: path, Msg: "cannot read config", Err: err}
	}
	return ParseConfig(path, b)
}

// ParseConfig parses the bytes of a config.json; file names it in errors.
func ParseConfig(file string, b []byte) (Config, error) {
	var r rawConfig
	if err := json.Unmarshal(b, &r); err != nil {
		return Config{}, &fault.InputError{File: file, Msg: "not a JSON config: " + err.Error()}
	}
	bad := func(key, format string, a ...any) (Config, error) {
		return Config{}, &fault.InputError{File: file, Key: key, Msg: fmt.Sprintf(format, a...)}
	}
	if r.ModelType != "" && r.ModelType != "deberta" {
		return bad("model_type", "is %q, want \"deberta\" (v1; deberta-v2 is another network)", r.ModelType)
	}
	c := Config{
		Hidden: r.HiddenSize, Layers: r.NumHiddenLayers, Heads: r.NumAttentionHeads, Intermediate: r.IntermediateSize,
		MaxPositions: r.MaxPositionEmbed, Vocab: r.VocabSize, TypeVocab: r.TypeVocabSize, PositionBiased: true, Eps: 1e-7,
	}
	for _, f := range []struct {
		key string
		v   int
	}{{"hidden_size", c.Hidden}, {"num_hidden_layers", c.Layers}, {"num_attention_heads", c.Heads}, {"intermediate_size", c.Intermediate}, {"max_position_embeddings", c.MaxPositions}, {"vocab_size", c.Vocab}} {
		if f.v < 1 || f.v > 1<<20 {
			return bad(f.key, "is %d, want 1 to %d", f.v, 1<<20)
		}
	}
	if c.TypeVocab < 0 || c.TypeVocab > 1<<10 {
		return bad("type_vocab_size", "is %d", c.TypeVocab)
	}
	// A count that divides the width but is not the checkpoint's cannot
	// be told from the weights: no tensor has a per-head dimension
	// (transformer.CheckHeads).
	if c.Hidden%c.Heads != 0 {
		return bad("num_attention_heads", "%d does not divide hidden_size %d", c.Heads, c.Hidden)
	}
	if r.PositionBiasedInput != nil {
		c.PositionBiased = *r.PositionBiasedInput
	}
	if r.LayerNormEps != nil {
		c.Eps = *r.LayerNormEps
	}
	if r.HiddenAct != "gelu" {
		return bad("hidden_act", "is %q, want \"gelu\"", r.HiddenAct)
	}
	if r.PoolerHiddenAct != nil && *r.PoolerHiddenAct != "gelu" {
		return bad("pooler_hidden_act", "is %q, want \"gelu\"", *r.PoolerHiddenAct)
	}
	if r.PoolerHiddenSize != nil && *r.PoolerHiddenSize != c.Hidden {
		return bad("pooler_hidden_size", "is %d, want hidden_size %d", *r.PoolerHiddenSize, c.Hidden)
	}
	if r.EmbeddingSize != nil && *r.EmbeddingSize != c.Hidden {
		return bad("embedding_size", "is %d, want hidden_size %d (a projected embedding is not supported)", *r.EmbeddingSize, c.Hidden)
	}
	if r.TalkingHead {
		return bad("talking_head", "is true; talking-heads attention is not supported")
	}
	if !r.RelativeAttention {
		return bad("relative_attention", "is false; only the disentangled attention of the released models is supported")
	}
	var types []string
	var s string
	if json.Unmarshal(r.PosAttType, &s) == nil {
		for _, t := range strings.Split(strings.ToLower(s), "|") {
			types = append(types, strings.TrimSpace(t))
		}
	} else if err := json.Unmarshal(r.PosAttType, &types); err != nil {
		return bad("pos_att_type", "is %s, want \"c2p|p2c\"", r.PosAttType)
	}
	if len(types) != 2 || !(types[0] == "c2p" && types[1] == "p2c" || types[0] == "p2c" && types[1] == "c2p") {
		return bad("pos_att_type", "is %s, want \"c2p|p2c\"", r.PosAttType)
	}
	c.MaxRelative = -1
	if r.MaxRelativePositions != nil {
		c.MaxRelative = *r.MaxRelativePositions
	}
	if c.MaxRelative < 1 {
		c.MaxRelative = c.MaxPositions
	}
	if c.MaxRelative > 1<<16 {
		return bad("max_relative_positions", "is %d", c.MaxRelative)
	}
	if len(r.ID2Label) != 3 {
		return bad("id2label", "has %d labels, want contradiction, neutral and entailment", len(r.ID2Label))
	}
	seen := map[nli.Label]bool{}
	for k, v := range r.ID2Label {
		i, err := strconv.Atoi(k)
		if err != nil || i < 0 || i > 2 {
			return bad("id2label", "has key %q, want 0, 1 or 2", k)
		}
		l, ok := nli.ParseLabel(v)
		if !ok {
			return bad("id2label", "label %q is not contradiction, neutral or entailment", v)
		}
		if seen[l] {
			return bad("id2label", "names %s twice", l)
		}
		seen[l] = true
		c.Labels[i] = l
	}
	return c, nil
}
