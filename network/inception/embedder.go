package inception

import (
	"context"

	"github.com/genlens/genlens/network/features"
)

// Name is the network's name in provenance records and cache keys.
const Name = "inception-v3"

// Arithmetic is the version of the network's arithmetic. It is raised
// with every change that moves the features' bits (a kernel, a
// convolution's form, an order of summation), which TestArithmetic
// detects, and it keys the feature cache with the BLAS backend.
const Arithmetic = 3

// Embedder is the network as a features.ImageEmbedder: one output (Out)
// of images preprocessed in one mode, from the weights whose SHA-256 is
// Weights. The model is loaded on first use through the load function
// given to NewEmbedder, so that embedders of several outputs share it.
type Embedder struct {
	mode    Mode
	out     Output
	weights string
	workers int
	model   features.Lazy[*Model]
}

// NewEmbedder returns the embedder of output out in mode, from weights
// of SHA-256 weightsSHA256 that load returns, running Forward on up to
// workers goroutines (<= 0: one per CPU).
func NewEmbedder(mode Mode, out Output, weightsSHA256 string, workers int, load func() (*Model, error)) *Embedder {
	return &Embedder{mode: mode, out: out, weights: weightsSHA256, workers: workers, model: features.Lazy[*Model]{Load: load}}
}

var _ features.ImageEmbedder = (*Embedder)(nil)

// Settings returns "inception-v3", the output's name ("2048",
// "logits_unbiased", ...) and length, the mode, the weights' SHA-256
// and features.Numerics of Arithmetic.
func (e *Embedder) Settings() features.Settings {
	return features.Settings{Embedder: Name, Preprocessing: string(e.mode), Output: string(e.out), Dim: e.out.Dim(), WeightsSHA256: e.weights, Numerics: features.Numerics(Name, Arithmetic)}
}

// Preprocess turns an image into the 3×299×299 input of the mode.
func (e *Embedder) Preprocess(img *features.RGB) ([]float32, error) { return Preprocess(img, e.mode) }

// Load loads the model, once.
func (e *Embedder) Load() error {
	_, err := e.model.Get()
	return err
}

// Forward returns the output of every image of batch, running the
// network only as far as the output (ForwardTo).
func (e *Embedder) Forward(ctx context.Context, batch [][]float32) ([][]float32, error) {
	m, err := e.model.Get()
	if err != nil {
		return nil, err
	}
	fs, err := m.ForwardTo(ctx, batch, e.workers, e.out)
	if err != nil {
		return nil, err
	}
	rows := make([][]float32, len(fs))
	for i := range fs {
		rows[i] = fs[i].Get(e.out)
	}
	return rows, nil
}
