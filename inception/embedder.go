package inception

import (
	"context"
	"sync"

	"github.com/genlens/genlens/features"
)

// Name is the network's name in provenance records and cache keys.
const Name = "inception-v3"

// Embedder is the network as a features.ImageEmbedder: one output (Out)
// of images preprocessed in one mode, from the weights whose SHA-256 is
// Weights. The model is loaded on first use through the load function
// given to NewEmbedder, so that embedders of several outputs share it.
type Embedder struct {
	mode    Mode
	out     Output
	weights string
	workers int

	once  sync.Once
	load  func() (*Model, error)
	model *Model
	err   error
}

// NewEmbedder returns the embedder of output out in mode, from weights
// of SHA-256 weightsSHA256 that load returns, running Forward on up to
// workers goroutines (<= 0: one per CPU).
func NewEmbedder(mode Mode, out Output, weightsSHA256 string, workers int, load func() (*Model, error)) *Embedder {
	return &Embedder{mode: mode, out: out, weights: weightsSHA256, workers: workers, load: load}
}

var _ features.ImageEmbedder = (*Embedder)(nil)

// Name returns "inception-v3".
func (e *Embedder) Name() string { return Name }

// Output returns the output's name ("2048", "logits_unbiased", ...).
func (e *Embedder) Output() string { return string(e.out) }

// Dim returns the output's length.
func (e *Embedder) Dim() int { return e.out.Dim() }

// Preprocessing returns the mode.
func (e *Embedder) Preprocessing() string { return string(e.mode) }

// WeightsSHA256 returns the hex SHA-256 of the weights.
func (e *Embedder) WeightsSHA256() string { return e.weights }

// Preprocess turns an image into the 3×299×299 input of the mode.
func (e *Embedder) Preprocess(img *features.RGB) ([]float32, error) { return Preprocess(img, e.mode) }

// Load loads the model, once.
func (e *Embedder) Load() error {
	e.once.Do(func() { e.model, e.err = e.load() })
	return e.err
}

// Forward returns the output of every image of batch.
func (e *Embedder) Forward(ctx context.Context, batch [][]float32) ([][]float32, error) {
	if err := e.Load(); err != nil {
		return nil, err
	}
	fs, err := e.model.Forward(ctx, batch, e.workers)
	if err != nil {
		return nil, err
	}
	rows := make([][]float32, len(fs))
	for i := range fs {
		rows[i] = fs[i].Get(e.out)
	}
	return rows, nil
}
