package job

import (
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"

	"genlens/dataio"
	"genlens/frechet"
)

// provenanceKey is the member of a statistics .npz written from images
// that says how the features were made: the UTF-8 bytes of a JSON object
// (embedder, mode or preset, weights_sha256), one byte per float64
// element, since an .npz holds numeric arrays. pytorch-fid and clean-fid
// read mu and sigma and ignore it; in Python,
// json.loads(bytes(np.load(f)["genlens_features"].astype("u1"))).
const provenanceKey = "genlens_features"

// provenance says how features were made; features that differ in any
// field are not comparable.
type provenance struct {
	Embedder      string `json:"embedder"`
	Mode          string `json:"mode,omitempty"`
	Preset        string `json:"preset,omitempty"`
	WeightsSHA256 string `json:"weights_sha256"`
}

func (p *provenance) String() string {
	how := "mode " + p.Mode
	if p.Preset != "" {
		how = "preset " + p.Preset
	}
	h := p.WeightsSHA256
	if len(h) > 12 {
		h = h[:12]
	}
	return fmt.Sprintf("%s (%s, weights sha256 %s…)", p.Embedder, how, h)
}

// isDINOv2 reports whether the features are a DINOv2 network's.
func (p *provenance) isDINOv2() bool { return p != nil && strings.HasPrefix(p.Embedder, "dinov2-") }

// provenanceOf returns how x makes features (after x.prepare).
func (x *extractor) provenance() *provenance {
	return &provenance{Embedder: x.net.embedder, Mode: string(x.net.mode), Preset: string(x.net.preset), WeightsSHA256: x.whash}
}

// array encodes p for a statistics file.
func (p *provenance) array() *dataio.Array {
	b, _ := json.Marshal(p)
	a := &dataio.Array{Shape: []int{len(b)}, Data: make([]float64, len(b))}
	for i, c := range b {
		a.Data[i] = float64(c)
	}
	return a
}

// readProvenance returns the provenance recorded in a statistics file,
// nil when it records none (pytorch-fid's and clean-fid's files).
func readProvenance(fsys fs.FS, path string) (*provenance, error) {
	keys, err := dataio.NPZKeysFS(fsys, path)
	if err != nil || !slices.Contains(keys, provenanceKey) {
		return nil, nil
	}
	a, err := dataio.ReadArrayFS(fsys, path, dataio.ReadOptions{Key: provenanceKey})
	if err != nil {
		return nil, err
	}
	b := make([]byte, len(a.Data))
	for i, v := range a.Data {
		if v < 0 || v > 255 || v != float64(byte(v)) {
			return nil, &dataio.InputError{File: path, Key: provenanceKey, Msg: fmt.Sprintf("element %d is %v, not a byte", i, v)}
		}
		b[i] = byte(v)
	}
	var p provenance
	if err := json.Unmarshal(b, &p); err != nil || p.Embedder == "" {
		return nil, &dataio.InputError{File: path, Key: provenanceKey, Msg: "is not genlens's record of how the features were made"}
	}
	return &p, nil
}

// sameProvenance refuses to compare features made differently; a side
// without a record (a file of rows, another tool's statistics) is not
// checked.
func sameProvenance(cmd, aPath string, a *provenance, bPath string, b *provenance) error {
	if a == nil || b == nil || *a == *b {
		return nil
	}
	return &dataio.InputError{File: bPath, Msg: fmt.Sprintf("%s: features of %s, but %s holds features of %s: features made by different networks, preprocessing or weights are not comparable", cmd, b, aPath, a)}
}

// encodeStatsProvenance writes statistics with their provenance, if any.
func encodeStatsProvenance(w io.Writer, s frechet.Stats, p *provenance) error {
	if p == nil {
		return frechet.EncodeStats(w, s)
	}
	return frechet.EncodeStatsWith(w, s, map[string]*dataio.Array{provenanceKey: p.array()})
}
