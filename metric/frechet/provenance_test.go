package frechet

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"testing/fstest"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/fault"
)

func TestReadProvenance(t *testing.T) {
	s := Stats{Mu: []float64{1, 2}, Sigma: mat.NewSymDense(2, []float64{1, 0, 0, 1}), N: 3}
	enc := func(meta map[string]string) *fstest.MapFile {
		var b bytes.Buffer
		if err := EncodeStatsMeta(&b, s, meta); err != nil {
			t.Fatal(err)
		}
		return &fstest.MapFile{Data: b.Bytes()}
	}
	legacy := func(b []byte) *fstest.MapFile {
		a := &dataio.Array{Shape: []int{len(b)}, Data: make([]float64, len(b))}
		for i, c := range b {
			a.Data[i] = float64(c)
		}
		var w bytes.Buffer
		if err := EncodeStatsWith(&w, s, map[string]*dataio.Array{LegacyProvenanceKey: a}); err != nil {
			t.Fatal(err)
		}
		return &fstest.MapFile{Data: w.Bytes()}
	}
	full := Provenance{Embedder: "inception-v3", Mode: "tf", Dims: "768", Weights: "ab", Input: "cd"}
	fsys := fstest.MapFS{
		"full.npz":      enc(full.StatsMeta()),
		"plain.npz":     enc(nil),
		"noweights.npz": enc(map[string]string{"embedder": "inception-v3", "mode": "tf"}),
		"legacy.npz":    legacy([]byte(`{"embedder":"inception","mode":"clean","weights_sha256":"ab"}`)),
		"garbled.npz":   legacy([]byte(`{"embedder"`)),
	}
	for _, tc := range []struct {
		file string
		want *Provenance
		err  string
	}{
		{"full.npz", &full, ""},
		{"plain.npz", nil, ""},
		{"legacy.npz", &Provenance{Embedder: "inception-v3", Mode: "clean", Weights: "ab"}, ""},
		{"noweights.npz", nil, `no "weights_sha256"`},
		{"garbled.npz", nil, "not genlens's record"},
	} {
		got, err := ReadProvenance(fsys, tc.file)
		var ie *fault.InputError
		switch {
		case tc.err != "":
			if !errors.As(err, &ie) || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: %v, want an input error with %q", tc.file, err, tc.err)
			}
		case err != nil || (got == nil) != (tc.want == nil) || got != nil && *got != *tc.want:
			t.Errorf("%s: %+v, %v; want %+v", tc.file, got, err, tc.want)
		}
	}
}

func TestProvenanceMismatch(t *testing.T) {
	a := &Provenance{Embedder: "inception-v3", Mode: "pytorch-fid", Dims: "2048", Weights: "ab"}
	for _, tc := range []struct {
		b       *Provenance
		refused bool
	}{
		{&Provenance{Embedder: "inception-v3", Mode: "pytorch-fid", Dims: "2048", Weights: "ab", Input: "other"}, false},
		{&Provenance{Embedder: "inception-v3", Mode: "pytorch-fid", Weights: "ab"}, false}, // an earlier file: no output recorded
		{&Provenance{Embedder: "inception-v3", Mode: "clean", Dims: "2048", Weights: "ab"}, true},
		{&Provenance{Embedder: "inception-v3", Mode: "pytorch-fid", Dims: "768", Weights: "ab"}, true},
		{&Provenance{Embedder: "inception-v3", Mode: "pytorch-fid", Dims: "2048", Weights: "cd"}, true},
		{&Provenance{Embedder: "dinov2-vitl14", Mode: "preset dgm-eval", Dims: "x_norm_clstoken", Weights: "ab"}, true},
		{&Provenance{Embedder: EmbedderRows, Dims: "2048"}, false},
		{nil, false},
	} {
		err := Mismatch("compare", "a.npz", a, "b.npz", tc.b)
		if (err != nil) != tc.refused || err != nil && (!strings.Contains(err.Error(), "a.npz") || !strings.Contains(err.Error(), "b.npz")) {
			t.Errorf("%+v: %v, want refused %v naming both files", tc.b, err, tc.refused)
		}
	}
}

func TestSides(t *testing.T) {
	clean := &Provenance{Embedder: "inception-v3", Mode: "clean", Dims: "2048", Weights: "ab"}
	fid := &Provenance{Embedder: "inception-v3", Mode: "pytorch-fid", Dims: "2048", Weights: "ab"}
	type side struct {
		path  string
		p     *Provenance
		stats bool
	}
	for _, tc := range []struct {
		name    string
		sides   []side
		refused string // the file the error is about, "" for none
		note    string // a file the note names, "" for no note
	}{
		{"alike", []side{{"a.npz", fid, true}, {"b", fid, false}}, "", ""},
		{"unknown statistics first", []side{{"a.npz", nil, true}, {"b.npz", clean, true}, {"c", fid, false}}, "c", "a.npz"},
		{"unknown statistics noted", []side{{"a.npz", nil, true}, {"b", fid, false}}, "", "a.npz"},
		{"rows not noted", []side{{"a.npy", nil, false}, {"b", fid, false}}, "", ""},
	} {
		c := Sides{Cmd: "compare"}
		var err error
		for _, s := range tc.sides {
			if err = c.Add(s.path, s.p, s.stats); err != nil {
				break
			}
		}
		switch {
		case tc.refused == "" && err != nil, tc.refused != "" && (err == nil || !strings.Contains(err.Error(), tc.refused) || !strings.Contains(err.Error(), "b.npz")):
			t.Errorf("%s: %v, want refused about %q", tc.name, err, tc.refused)
		case tc.refused == "" && c.First != fid:
			t.Errorf("%s: first %+v, want %+v", tc.name, c.First, fid)
		}
		if n := c.Note(); (n != "") != (tc.note != "") || !strings.Contains(n, tc.note) {
			t.Errorf("%s: note %q, want one naming %q", tc.name, n, tc.note)
		}
	}
}
