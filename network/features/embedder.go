package features

import (
	"context"
	"sync"
)

// Embedder is a network that turns preprocessed items into feature
// vectors, with everything that decides those vectors besides the items:
// its name, the output taken, the preprocessing and the weights. X is
// the network's input for one item: a float32 tensor for an image
// network, token ids for a text encoder.
type Embedder[X any] interface {
	// Settings are what decides the vectors besides the items: the
	// network's name ("inception-v3", "dinov2-vitl14"), its output
	// ("2048", "x_norm_clstoken"), the vectors' length, the
	// preprocessing ("pytorch-fid", "preset dgm-eval") and the weights'
	// SHA-256. They key the cache, and a statistics file records them
	// as its provenance.
	Settings() Settings
	// Load makes the network ready; Forward calls it when needed, and a
	// caller calls it first to hear of bad weights before any item.
	Load() error
	// Forward returns the features of a batch of preprocessed items, one
	// Settings().Dim-long vector each.
	Forward(ctx context.Context, batch []X) ([][]float32, error)
}

// ImageEmbedder is an Embedder of images: Preprocess turns a decoded RGB
// image into the network's input tensor.
type ImageEmbedder interface {
	Embedder[[]float32]
	Preprocess(img *RGB) ([]float32, error)
}

// Lazy is a network loaded on first use: the first Get calls Load, and
// every Get returns its network or its error. An embedder keeps its
// network in one, so that building an embedder costs nothing and the
// embedders of several outputs can share one network.
type Lazy[M any] struct {
	Load func() (M, error)

	once sync.Once
	m    M
	err  error
}

// Get returns the network, loading it on the first call.
func (l *Lazy[M]) Get() (M, error) {
	l.once.Do(func() { l.m, l.err = l.Load() })
	return l.m, l.err
}
