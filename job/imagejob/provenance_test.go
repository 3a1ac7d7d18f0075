package imagejob

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/testkit/shareddata"
	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/metric/frechet"
)

// inceptionFS holds n images of the shared Inception fixture under imgs/
// and returns it with the path of the fixture's random weights.
func inceptionFS(t *testing.T, n int) (fstest.MapFS, string) {
	t.Helper()
	dir := shareddata.Path(t, "fixtures/inception_random")
	fsys := fstest.MapFS{}
	for i := 0; i < n; i++ {
		b, err := os.ReadFile(filepath.Join(dir, "images", fmt.Sprintf("img%03d.png", i)))
		if err != nil {
			t.Fatal(err)
		}
		fsys[fmt.Sprintf("imgs/img%03d.png", i)] = &fstest.MapFile{Data: b}
	}
	return fsys, filepath.Join(dir, "inception_random.pth")
}

// legacyStats writes statistics with the JSON record earlier releases
// kept as bytes in a float64 array.
func legacyStats(t *testing.T, fsys fstest.MapFS, name string, s frechet.Stats, rec map[string]string) {
	t.Helper()
	b, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	a := &dataio.Array{Shape: []int{len(b)}, Data: make([]float64, len(b))}
	for i, c := range b {
		a.Data[i] = float64(c)
	}
	writeArtifact(t, fsys, name, job.Artifact{Name: name, Write: func(w io.Writer) error {
		return frechet.EncodeStatsWith(w, s, map[string]*dataio.Array{frechet.LegacyProvenanceKey: a})
	}})
}

// Statistics merged from parts and statistics of one pass record their
// provenance alike, and every comparison checks it: merged pytorch-fid
// features against clean ones are refused as two single-pass files are.
func TestProvenanceMergedAndSingle(t *testing.T) {
	fsys, weights := inceptionFS(t, 6)
	t.Setenv("GENLENS_CACHE", t.TempDir())
	ctx := context.Background()
	var warns []string
	env := job.Env{Models: testModels, FS: fsys, Warn: func(m string) { warns = append(warns, m) }}

	// merged.npz: two parts of pytorch-fid features, merged.
	req := NewStatsRequest()
	req.In, req.Dims, req.Weights = "imgs", "64", weights
	var parts []string
	for i := 0; i < 2; i++ {
		r := req
		r.Shards, r.Shard = 2, i
		res, err := Stats(ctx, env, r)
		if err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("part-%d.npz", i)
		writeArtifact(t, fsys, name, res.Artifact(name))
		parts = append(parts, name)
	}
	m, err := StatsMerge(ctx, env, StatsMergeRequest{Parts: parts})
	if err != nil {
		t.Fatal(err)
	}
	writeArtifact(t, fsys, "merged.npz", m.Artifact("merged.npz"))
	// single.npz: the same features in one pass; clean.npz: clean mode.
	single, err := Stats(ctx, env, req)
	if err != nil {
		t.Fatal(err)
	}
	writeArtifact(t, fsys, "single.npz", single.Artifact("single.npz"))
	req.Mode = "clean"
	clean, err := Stats(ctx, env, req)
	if err != nil {
		t.Fatal(err)
	}
	writeArtifact(t, fsys, "clean.npz", clean.Artifact("clean.npz"))

	pm, err := frechet.ReadProvenance(fsys, "merged.npz")
	if err != nil || pm == nil {
		t.Fatalf("merged provenance: %v, %v", pm, err)
	}
	ps, err := frechet.ReadProvenance(fsys, "single.npz")
	if err != nil || ps == nil || *ps != *pm {
		t.Fatalf("single provenance %+v, merged %+v (%v): want the same record", ps, pm, err)
	}

	for _, tc := range []struct{ real, fake string }{
		{"merged.npz", "clean.npz"}, {"clean.npz", "merged.npz"}, {"single.npz", "clean.npz"},
	} {
		cr := NewCompareRequest()
		cr.Real, cr.Fake = tc.real, tc.fake
		_, err := Compare(ctx, env, cr)
		var ie *fault.InputError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), tc.real) || !strings.Contains(err.Error(), tc.fake) ||
			!strings.Contains(err.Error(), "mode pytorch-fid") || !strings.Contains(err.Error(), "mode clean") {
			t.Errorf("compare %s %s: %v; want an input error naming both files and modes", tc.real, tc.fake, err)
		}
	}
	// A folder against a statistics file made otherwise.
	cr := NewCompareRequest()
	cr.Real, cr.Fake, cr.Dims, cr.Weights = "merged.npz", "imgs", "64", weights
	cr.Mode = "clean"
	if _, err := Compare(ctx, env, cr); err == nil || !strings.Contains(err.Error(), "merged.npz") {
		t.Errorf("clean folder against merged pytorch-fid statistics: %v", err)
	}
	cr.Mode = ""
	warns = nil
	if _, err := Compare(ctx, env, cr); err != nil || strings.Contains(strings.Join(warns, "\n"), "provenance") {
		t.Errorf("same provenance: %v, warnings %q", err, warns)
	}
	// select: folder pools against a reference made otherwise.
	sr := NewSelectRequest()
	sr.Pools, sr.Ref, sr.Weights, sr.Mode = []string{"imgs", "imgs"}, "merged.npz", weights, "clean"
	sr.Batch, sr.Steps, sr.Trials = 2, 4, 1
	if _, err := Select(ctx, env, sr); err == nil || !strings.Contains(err.Error(), "merged.npz") || !strings.Contains(err.Error(), "mode clean") {
		t.Errorf("select against a reference of another mode: %v", err)
	}
}

// Statistics files of earlier releases (the JSON record) are still
// checked; files that record nothing are compared with one warning.
func TestProvenanceLegacyAndUnknown(t *testing.T) {
	fsys := fstest.MapFS{}
	x := mat.NewDense(5, 3, []float64{1, 2, 3, 4, 5, 7, 1, 0, 2, 3, 3, 3, 9, 1, 4})
	s := frechet.StatsOf(x, 1)
	legacyStats(t, fsys, "old-pt.npz", s, map[string]string{"embedder": "inception", "mode": "pytorch-fid", "weights_sha256": "ab"})
	legacyStats(t, fsys, "old-dino.npz", s, map[string]string{"embedder": "dinov2-vitl14", "preset": "dgm-eval", "weights_sha256": "cd"})
	writeArtifact(t, fsys, "new-clean.npz", job.Artifact{Name: "new-clean.npz", Write: func(w io.Writer) error {
		return frechet.EncodeStatsMeta(w, s, frechet.Provenance{Embedder: "inception-v3", Mode: "clean", Dims: "3", Weights: "ab"}.StatsMeta())
	}})
	writeArtifact(t, fsys, "new-pt.npz", job.Artifact{Name: "new-pt.npz", Write: func(w io.Writer) error {
		return frechet.EncodeStatsMeta(w, s, frechet.Provenance{Embedder: "inception-v3", Mode: "pytorch-fid", Dims: "3", Weights: "ab"}.StatsMeta())
	}})
	writeArtifact(t, fsys, "pytorch-fid.npz", job.Artifact{Name: "pytorch-fid.npz", Write: func(w io.Writer) error {
		return frechet.EncodeStats(w, s)
	}})
	p, err := frechet.ReadProvenance(fsys, "old-dino.npz")
	if err != nil || *p != (frechet.Provenance{Embedder: "dinov2-vitl14", Mode: "preset dgm-eval", Weights: "cd"}) {
		t.Fatalf("legacy record: %+v, %v", p, err)
	}
	for _, tc := range []struct {
		real, fake string
		refused    bool
		warnings   int
	}{
		{"old-pt.npz", "new-pt.npz", false, 0},
		{"old-pt.npz", "new-clean.npz", true, 0},
		{"old-dino.npz", "new-pt.npz", true, 0},
		{"pytorch-fid.npz", "new-clean.npz", false, 1},
		{"pytorch-fid.npz", "pytorch-fid.npz", false, 1},
	} {
		var warns []string
		req := NewCompareRequest()
		req.Real, req.Fake = tc.real, tc.fake
		_, err := Compare(context.Background(), job.Env{FS: fsys, Warn: func(m string) { warns = append(warns, m) }}, req)
		if (err != nil) != tc.refused || len(warns) != tc.warnings {
			t.Errorf("%s against %s: %v, warnings %q; want refused %v, %d warning(s)", tc.real, tc.fake, err, warns, tc.refused, tc.warnings)
		}
		if tc.warnings > 0 && !strings.Contains(warns[0], "pytorch-fid.npz") {
			t.Errorf("warning %q does not name the file", warns[0])
		}
	}
}
