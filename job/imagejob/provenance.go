package imagejob

import (
	"strings"

	"github.com/genlens/genlens/features"
	"github.com/genlens/genlens/frechet"
	"github.com/genlens/genlens/inception"
	"github.com/genlens/genlens/job"
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

// provenanceCheck gathers the provenance of the sides of one comparison:
// it refuses two sides made differently, naming both files and both
// records, and remembers the statistics files that record none, for one
// warning (note) at the end.
type provenanceCheck struct {
	cmd     string
	first   *frechet.Provenance
	path    string
	unknown []string
}

// add checks the side path of provenance p (nil: none recorded) against
// the sides added before; stats says the side is a statistics file (rows
// never record a provenance, and are not warned about).
func (c *provenanceCheck) add(path string, p *frechet.Provenance, stats bool) error {
	if !p.Known() {
		if stats {
			c.unknown = append(c.unknown, path)
		}
		return nil
	}
	if c.first == nil {
		c.first, c.path = p, path
		return nil
	}
	return frechet.Mismatch(c.cmd, c.path, c.first, path, p)
}

// note warns, once, about the statistics files that record no
// provenance.
func (c *provenanceCheck) note(env job.Env) {
	if w := frechet.UnknownNote(c.cmd, c.unknown); w != "" {
		env.Warning(w)
	}
}
