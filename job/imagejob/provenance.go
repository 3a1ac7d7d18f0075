package imagejob

import (
	"github.com/genlens/genlens/metric/frechet"
	"github.com/genlens/genlens/network/inception"
)

// provenance returns how x makes the out features (after x.prepare):
// the embedder's settings, as statistics and part files record them.
func (x *extractor) provenance(out inception.Output) *frechet.Provenance {
	s := x.embedder(out).Settings()
	return &frechet.Provenance{Embedder: s.Embedder, Mode: s.Preprocessing, Dims: s.Output, Weights: s.WeightsSHA256}
}
