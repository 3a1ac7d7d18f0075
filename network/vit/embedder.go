package vit

import (
	"context"

	"github.com/genlens/genlens/network/features"
)

// Arithmetic is the version of the towers' arithmetic. It is raised with
// every change that moves the features' bits (a kernel, an order of
// summation), which TestArithmetic detects, and it keys the feature
// cache with the BLAS backend.
const Arithmetic = 1

// Embedder is a network of Config as a features.ImageEmbedder: images
// preprocessed by one preset, from the weights whose SHA-256 is given.
// The model is loaded on first use through the load function given to
// NewEmbedder.
type Embedder struct {
	settings features.Settings
	cfg      Config
	preset   Preset
	workers  int
	model    features.Lazy[*Model]
}

// NewEmbedder returns the embedder of network cfg with preset p, from
// weights of SHA-256 weightsSHA256 that load returns, running the
// element-wise steps of Forward on up to workers goroutines.
func NewEmbedder(cfg Config, p Preset, weightsSHA256 string, workers int, load func() (*Model, error)) *Embedder {
	// The output: DINOv2's class token after the final norm, CLIP's
	// encode_image (L2-normalised for CMMD).
	out := "encode_image"
	switch {
	case cfg.Family == DINOv2:
		out = "x_norm_clstoken"
	case cfg.Normalize:
		out = "encode_image_normalized"
	}
	return &Embedder{settings: features.Settings{Embedder: cfg.Name, Preprocessing: "preset " + string(p), Output: out, Dim: cfg.Dim(), WeightsSHA256: weightsSHA256,
		Numerics: features.Numerics(cfg.Name, Arithmetic)}, cfg: cfg, preset: p, workers: workers, model: features.Lazy[*Model]{Load: load}}
}

var _ features.ImageEmbedder = (*Embedder)(nil)

// Settings returns the network's name ("dinov2-vitl14",
// "clip-vit-b-32", ...), output, width, "preset " and the preset's name,
// the weights' SHA-256 and features.Numerics of Arithmetic.
func (e *Embedder) Settings() features.Settings { return e.settings }

// Preprocess turns an image into the network's input by the preset.
func (e *Embedder) Preprocess(img *features.RGB) ([]float32, error) {
	return Preprocess(img, e.preset, e.cfg.Input)
}

// Load loads the model, once.
func (e *Embedder) Load() error {
	_, err := e.model.Get()
	return err
}

// Forward returns the output of every image of batch.
func (e *Embedder) Forward(ctx context.Context, batch [][]float32) ([][]float32, error) {
	m, err := e.model.Get()
	if err != nil {
		return nil, err
	}
	return m.Forward(ctx, batch, e.workers)
}
