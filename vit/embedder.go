package vit

import (
	"context"
	"sync"

	"github.com/genlens/genlens/features"
)

// Embedder is a network of Config as a features.ImageEmbedder: images
// preprocessed by one preset, from the weights whose SHA-256 is given.
// The model is loaded on first use through the load function given to
// NewEmbedder.
type Embedder struct {
	cfg     Config
	preset  Preset
	weights string
	workers int

	once  sync.Once
	load  func() (*Model, error)
	model *Model
	err   error
}

// NewEmbedder returns the embedder of network cfg with preset p, from
// weights of SHA-256 weightsSHA256 that load returns, running the
// element-wise steps of Forward on up to workers goroutines.
func NewEmbedder(cfg Config, p Preset, weightsSHA256 string, workers int, load func() (*Model, error)) *Embedder {
	return &Embedder{cfg: cfg, preset: p, weights: weightsSHA256, workers: workers, load: load}
}

var _ features.ImageEmbedder = (*Embedder)(nil)

// Name returns the network's name ("dinov2-vitl14", "clip-vit-b-32", ...).
func (e *Embedder) Name() string { return e.cfg.Name }

// Output names what the network outputs: DINOv2's class token after the
// final norm, CLIP's encode_image (L2-normalised for CMMD).
func (e *Embedder) Output() string {
	switch {
	case e.cfg.Family == DINOv2:
		return "x_norm_clstoken"
	case e.cfg.Normalize:
		return "encode_image_normalized"
	}
	return "encode_image"
}

// Dim returns the width of the output.
func (e *Embedder) Dim() int { return e.cfg.Dim() }

// Preprocessing returns "preset " and the preset's name.
func (e *Embedder) Preprocessing() string { return "preset " + string(e.preset) }

// WeightsSHA256 returns the hex SHA-256 of the weights.
func (e *Embedder) WeightsSHA256() string { return e.weights }

// Preprocess turns an image into the network's input by the preset.
func (e *Embedder) Preprocess(img *features.RGB) ([]float32, error) {
	return Preprocess(img, e.preset, e.cfg.Input)
}

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
	return e.model.Forward(ctx, batch, e.workers)
}
