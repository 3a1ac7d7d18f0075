package bert

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/genlens/genlens/internal/text/wordpiece"
	"github.com/genlens/genlens/network/features"
	"github.com/genlens/genlens/network/internal/transformer"
)

// Pooling is how a sentence embedder makes one vector of a text's token
// states.
type Pooling string

const (
	// Mean averages the states of the text's tokens ([CLS] and [SEP]
	// included), as the attention mask selects them.
	Mean Pooling = "mean"
	// CLS takes the state of [CLS].
	CLS Pooling = "cls"
)

// Spec is a sentence embedder: its name, pooling, normalisation and the
// prefixes its model card asks queries and passages to carry.
type Spec struct {
	Name      string
	Pooling   Pooling
	Normalize bool
	// Query and Passage are put before a text when asked for ("query: ",
	// "passage: " for e5); empty when the model has none.
	Query, Passage string
}

// Specs are the embedders genlens knows by name; "bert" is any BERT
// directory, mean pooling and L2.
var Specs = []Spec{
	{Name: "e5-small-v2", Pooling: Mean, Normalize: true, Query: "query: ", Passage: "passage: "},
	{Name: "all-minilm-l6-v2", Pooling: Mean, Normalize: true},
	{Name: "bge-small-en-v1.5", Pooling: CLS, Normalize: true},
	{Name: "bert", Pooling: Mean, Normalize: true},
}

// Prefixes are the choices of PrefixFor: the model card's query prefix
// (the default), its passage prefix, or none.
var Prefixes = []string{"query", "passage", "none"}

// PrefixFor returns the text put before every text for choice, one of
// Prefixes ("" is query): e5-small-v2's "query: " or "passage: ", or
// nothing. A model with no prefixes puts nothing before a text whatever
// the choice. ok is false for a choice not in Prefixes.
func (s Spec) PrefixFor(choice string) (prefix string, ok bool) {
	switch choice {
	case "", "query":
		return s.Query, true
	case "passage":
		return s.Passage, true
	case "none":
		return "", true
	}
	return "", false
}

// Names returns the names of Specs.
func Names() []string {
	var out []string
	for _, s := range Specs {
		out = append(out, s.Name)
	}
	return out
}

// Lookup returns the Spec of a name.
func Lookup(name string) (Spec, bool) {
	i := slices.IndexFunc(Specs, func(s Spec) bool { return s.Name == name })
	if i < 0 {
		return Spec{}, false
	}
	return Specs[i], true
}

// Embedder is a sentence embedder as a features.Embedder of texts: a
// text's feature is its pooled, normalised final state. The prefix, if
// any, is part of the embedder's identity (its Preprocessing), so the
// cache never mixes queries and passages.
type Embedder struct {
	spec    Spec
	prefix  string
	weights string
	workers int
	dim     int
	model   features.Lazy[*Model]
}

var _ features.Embedder[string] = (*Embedder)(nil)

// NewEmbedder returns the embedder of spec that puts prefix before every
// text, its model (of hidden width dim) from load, its weights of
// SHA-256 weightsSHA256.
func NewEmbedder(spec Spec, prefix string, dim int, weightsSHA256 string, workers int, load func() (*Model, error)) *Embedder {
	e := &Embedder{spec: spec, prefix: prefix, dim: dim, weights: weightsSHA256, workers: workers}
	e.model.Load = func() (*Model, error) {
		m, err := load()
		if err == nil && m.cfg.Hidden != dim {
			return nil, fmt.Errorf("bert: the model is %d wide, the embedder was made for %d", m.cfg.Hidden, dim)
		}
		return m, err
	}
	return e
}

// OpenEmbedder loads the embedder name (one of Names) from the model
// directory dir (see Load), with prefix put before every text; its
// identity includes the SHA-256 of the weights file.
func OpenEmbedder(name, dir, prefix string) (*Embedder, error) {
	spec, ok := Lookup(name)
	if !ok {
		return nil, fmt.Errorf("bert: no embedder %q: want one of %s", name, strings.Join(Names(), ", "))
	}
	m, err := Load(dir, false)
	if err != nil {
		return nil, err
	}
	wf, err := WeightsFile(dir)
	if err != nil {
		return nil, err
	}
	sum, err := transformer.FileSHA256(wf)
	if err != nil {
		return nil, err
	}
	e := NewEmbedder(spec, prefix, m.Config().Hidden, sum, 0, func() (*Model, error) { return m, nil })
	return e, e.Load()
}

// Name returns the embedder's name.
func (e *Embedder) Name() string { return e.spec.Name }

// Dim is the hidden width.
func (e *Embedder) Dim() int { return e.dim }

// Settings returns the name, the pooling and normalisation as the output
// ("mean_pool_l2"), the hidden width, the tokenizer and the prefix as the
// preprocessing, the weights' SHA-256 and features.Numerics of Arithmetic.
func (e *Embedder) Settings() features.Settings {
	out := string(e.spec.Pooling) + "_pool"
	if e.spec.Normalize {
		out += "_l2"
	}
	return features.Settings{Embedder: e.spec.Name, Preprocessing: fmt.Sprintf("wordpiece prefix %q", e.prefix), Output: out, Dim: e.dim, WeightsSHA256: e.weights,
		Numerics: features.Numerics(e.spec.Name, Arithmetic)}
}

// Arithmetic is the version of the encoders' arithmetic. It is raised
// with every change that moves the vectors' bits (a kernel, an order of
// summation), which TestArithmetic detects, and it keys the feature
// cache with the BLAS backend.
const Arithmetic = 1

// Load loads the model, once.
func (e *Embedder) Load() error {
	_, err := e.model.Get()
	return err
}

// Forward returns the embeddings of a batch of texts.
func (e *Embedder) Forward(ctx context.Context, batch []string) ([][]float32, error) {
	m, err := e.model.Get()
	if err != nil {
		return nil, err
	}
	return m.Embed(ctx, e.spec, e.prefix, batch, e.workers)
}

// Embed returns the embeddings of texts by spec, each text after prefix,
// cut to the model's length. A vector that is not finite, which only
// weights large enough to overflow float32 give, is an error naming the
// weights (transformer.CheckOutput).
func (m *Model) Embed(ctx context.Context, spec Spec, prefix string, texts []string, workers int) ([][]float32, error) {
	encs := make([]wordpiece.Encoding, len(texts))
	for i, t := range texts {
		// A text of megabytes takes a second or more to tokenise: a
		// cancelled run stops at the next one.
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		encs[i] = m.tok.Encode(prefix+t, m.cfg.MaxPositions)
	}
	out := make([][]float32, len(texts))
	err := m.Run(ctx, encs, workers, func(first int, s *States) {
		for i := 0; i+1 < len(s.Off); i++ {
			var v []float32
			if spec.Pooling == CLS {
				v = make([]float32, s.Hidden)
				s.Token(i, 0, v)
			} else {
				v = s.Mean(i)
			}
			if spec.Normalize {
				l2(v)
			}
			out[first+i] = v
		}
	})
	if err != nil {
		return nil, err
	}
	if err := transformer.CheckOutputs(m.file, out); err != nil {
		return nil, err
	}
	return out, nil
}

// l2 scales v to unit length (a zero vector stays zero).
func l2(v []float32) {
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	if ss == 0 {
		return
	}
	inv := 1 / math.Sqrt(ss)
	for i, x := range v {
		v[i] = float32(float64(x) * inv)
	}
}
