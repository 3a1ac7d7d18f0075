package features

import (
	"context"

	"github.com/genlens/genlens/frechet"
)

// Embedder is a network that turns preprocessed items into feature
// vectors, with everything that decides those vectors besides the items:
// its name, the output taken, the preprocessing and the weights. X is
// the network's input for one item: a float32 tensor for an image
// network, token ids for a text encoder.
type Embedder[X any] interface {
	// Name names the network: "inception-v3", "dinov2-vitl14", ...
	Name() string
	// Output names the output the features are, for networks with
	// several ("2048", "logits_unbiased") or one ("x_norm_clstoken").
	Output() string
	// Dim is the length of a feature vector.
	Dim() int
	// Preprocessing names what an item goes through before the network
	// ("pytorch-fid", "preset dgm-eval").
	Preprocessing() string
	// WeightsSHA256 is the hex SHA-256 of the weights file.
	WeightsSHA256() string
	// Load makes the network ready; Forward calls it when needed, and a
	// caller calls it first to hear of bad weights before any item.
	Load() error
	// Forward returns the features of a batch of preprocessed items, one
	// Dim-long vector each.
	Forward(ctx context.Context, batch []X) ([][]float32, error)
}

// ImageEmbedder is an Embedder of images: Preprocess turns a decoded RGB
// image into the network's input tensor.
type ImageEmbedder interface {
	Embedder[[]float32]
	Preprocess(img *RGB) ([]float32, error)
}

// SettingsOf returns the cache settings of e's features.
func SettingsOf[X any](e Embedder[X]) Settings {
	return Settings{Embedder: e.Name(), Preprocessing: e.Preprocessing(), Output: e.Output(), Dim: e.Dim(), WeightsSHA256: e.WeightsSHA256()}
}

// ProvenanceOf returns the record of how e makes features, as
// statistics and part files keep it.
func ProvenanceOf[X any](e Embedder[X]) frechet.Provenance {
	return frechet.Provenance{Embedder: e.Name(), Mode: e.Preprocessing(), Dims: e.Output(), Weights: e.WeightsSHA256()}
}
