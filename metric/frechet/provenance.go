package frechet

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/fault"
)

// Provenance says how a set of features was made: the embedder
// ("inception-v3", "dinov2-vitl14", ..., or "features" for rows given as
// a file of unknown origin), the preprocessing (Inception's mode,
// pytorch-fid, tf or clean, or a ViT's preset as "preset dgm-eval"), the
// output (Inception's "2048", "768", ...; a ViT's width), the SHA-256 of
// the network weights, and, where known, a fingerprint of the input (the
// SHA-256 of the listing of the folder or of the feature file's bytes).
// Features of different provenance are not comparable: parts of them
// never merge and statistics of them are never compared.
//
// Statistics files and part files record it as NumPy unicode scalars
// (embedder, mode, dims, weights_sha256 and input_sha256), which np.load
// opens with its defaults and pytorch-fid ignores; ReadProvenance also
// reads the JSON record earlier statistics files kept as bytes in a
// float64 array (LegacyProvenanceKey).
//
// Its JSON (in results) uses the names of the text entries.
type Provenance struct {
	Embedder string `json:"embedder"`
	Mode     string `json:"mode,omitempty"`
	Dims     string `json:"dims,omitempty"`
	Weights  string `json:"weights_sha256"` // SHA-256 hex of the weights file
	// Input fingerprints the input the features were made from; it is
	// recorded, never compared (the two sides of a comparison are
	// different inputs).
	Input string `json:"input_sha256,omitempty"`
}

// EmbedderRows is the embedder of features given as rows of a file,
// whose origin genlens does not know.
const EmbedderRows = "features"

// LegacyProvenanceKey is the member of statistics files written by
// earlier releases holding their provenance: the UTF-8 bytes of a JSON
// object (embedder, mode or preset, weights_sha256), one byte per float64
// element.
const LegacyProvenanceKey = "genlens_features"

// Known reports whether p says how the features were made: false for nil
// and for rows of unknown origin.
func (p *Provenance) Known() bool {
	return p != nil && p.Embedder != "" && p.Embedder != EmbedderRows
}

// Comparable reports whether features of p and q may be compared: same
// embedder, preprocessing and weights, and the same output when both
// record it (earlier statistics files did not).
func (p Provenance) Comparable(q Provenance) bool {
	return p.Embedder == q.Embedder && p.Mode == q.Mode && p.Weights == q.Weights &&
		(p.Dims == "" || q.Dims == "" || p.Dims == q.Dims)
}

// String renders the provenance on one line.
func (p Provenance) String() string {
	return fmt.Sprintf("embedder %s, mode %s, dims %s, weights %.12s", p.Embedder, orDash(p.Mode), orDash(p.Dims), orDash(p.Weights))
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// StatsMeta returns the provenance as the text entries of a statistics
// file (WriteStatsMeta): embedder, mode, dims, weights_sha256, and
// input_sha256 when the input is known.
func (p Provenance) StatsMeta() map[string]string {
	m := map[string]string{"embedder": p.Embedder, "mode": p.Mode, "dims": p.Dims, "weights_sha256": p.Weights}
	if p.Input != "" {
		m["input_sha256"] = p.Input
	}
	return m
}

// ReadProvenance returns the provenance a statistics or part file
// records, nil when it records none (pytorch-fid's and clean-fid's
// statistics). A record that is there but unreadable is a
// *fault.InputError.
func ReadProvenance(fsys fs.FS, path string) (*Provenance, error) {
	keys, err := dataio.NPZKeysFS(fsys, path)
	if err != nil {
		return nil, err
	}
	switch {
	case slices.Contains(keys, "embedder"):
		p := &Provenance{}
		for _, f := range []struct {
			key string
			dst *string
		}{{"embedder", &p.Embedder}, {"mode", &p.Mode}, {"dims", &p.Dims}, {"weights_sha256", &p.Weights}, {"input_sha256", &p.Input}} {
			if !slices.Contains(keys, f.key) {
				if f.key == "input_sha256" || f.key == "dims" {
					continue
				}
				return nil, &fault.InputError{File: path, Msg: fmt.Sprintf("records an embedder but no %q: not genlens's record of how the features were made", f.key)}
			}
			if *f.dst, err = dataio.ReadNPZText(fsys, path, f.key); err != nil {
				return nil, err
			}
		}
		if p.Embedder == "" {
			return nil, &fault.InputError{File: path, Key: "embedder", Msg: "is empty"}
		}
		return p, nil
	case slices.Contains(keys, LegacyProvenanceKey):
		return readLegacyProvenance(fsys, path)
	}
	return nil, nil
}

// readLegacyProvenance reads the JSON record of LegacyProvenanceKey.
// Its embedder "inception" is today's "inception-v3", a preset is
// written as the mode "preset NAME", and the output is not recorded.
func readLegacyProvenance(fsys fs.FS, path string) (*Provenance, error) {
	a, err := dataio.ReadArrayFS(fsys, path, dataio.ReadOptions{Key: LegacyProvenanceKey})
	if err != nil {
		return nil, err
	}
	b := make([]byte, len(a.Data))
	for i, v := range a.Data {
		if v < 0 || v > 255 || v != float64(byte(v)) {
			return nil, &fault.InputError{File: path, Key: LegacyProvenanceKey, Msg: fmt.Sprintf("element %d is %v, not a byte", i, v)}
		}
		b[i] = byte(v)
	}
	var rec struct {
		Embedder      string `json:"embedder"`
		Mode          string `json:"mode"`
		Preset        string `json:"preset"`
		WeightsSHA256 string `json:"weights_sha256"`
	}
	if err := json.Unmarshal(b, &rec); err != nil || rec.Embedder == "" {
		return nil, &fault.InputError{File: path, Key: LegacyProvenanceKey, Msg: "is not genlens's record of how the features were made"}
	}
	p := &Provenance{Embedder: rec.Embedder, Mode: rec.Mode, Weights: rec.WeightsSHA256}
	if p.Embedder == "inception" {
		p.Embedder = "inception-v3"
	}
	if rec.Preset != "" {
		p.Mode = "preset " + rec.Preset
	}
	return p, nil
}

// Mismatch returns nil when features of provenance a (of file aPath) and
// b (of bPath) may be compared, and else a *fault.InputError about
// bPath naming both files and both records. A side that records nothing
// (nil, or rows of unknown origin) is not checked here; see Known.
func Mismatch(cmd, aPath string, a *Provenance, bPath string, b *Provenance) error {
	if !a.Known() || !b.Known() || a.Comparable(*b) {
		return nil
	}
	return &fault.InputError{File: bPath, Msg: fmt.Sprintf("%s: features of %s, but %s holds features of %s: features made by different networks, preprocessing, outputs or weights are not comparable",
		cmd, b, aPath, a)}
}

// Sides gathers the provenance of the sides of one comparison of
// command Cmd: Add refuses a side made differently from those added
// before, naming both files and both records (Mismatch), and remembers
// the statistics files that record none, for one sentence at the end
// (Note).
type Sides struct {
	Cmd   string
	First *Provenance // the first known provenance added, nil before

	path    string // First's file
	unknown []string
}

// Add checks the side path of provenance p (nil: none recorded) against
// the sides added before; stats says the side is a statistics file (rows
// never record a provenance, and are not noted).
func (c *Sides) Add(path string, p *Provenance, stats bool) error {
	if !p.Known() {
		if stats {
			c.unknown = append(c.unknown, path)
		}
		return nil
	}
	if c.First == nil {
		c.First, c.path = p, path
		return nil
	}
	return Mismatch(c.Cmd, c.path, c.First, path, p)
}

// Note returns the sentence a comparison gives, once, when statistics
// files among its sides record no provenance: they are compared as they
// are, unchecked. "" when every side recorded one.
func (c *Sides) Note() string {
	if len(c.unknown) == 0 {
		return ""
	}
	verb := "records"
	if len(c.unknown) > 1 {
		verb = "record"
	}
	return fmt.Sprintf("%s: %s %s no provenance (statistics of pytorch-fid or clean-fid, or of feature rows): compared as given, without checking that both sides were made by the same embedder, preprocessing and weights",
		c.Cmd, strings.Join(c.unknown, " and "), verb)
}
