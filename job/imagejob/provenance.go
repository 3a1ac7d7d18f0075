package imagejob

import (
	"strings"

	"github.com/genlens/genlens/features"
	"github.com/genlens/genlens/frechet"
	"github.com/genlens/genlens/inception"
)

// provenance returns how x makes the out features (after x.prepare).
func (x *extractor) provenance(out inception.Output) *frechet.Provenance {
	p := features.ProvenanceOf(x.embedder(out))
	return &p
}

// isDINOv2 reports whether the features are a DINOv2 network's.
func isDINOv2(p *frechet.Provenance) bool {
	return p != nil && strings.HasPrefix(p.Embedder, "dinov2-")
}
