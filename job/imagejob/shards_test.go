package imagejob

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
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
)

func TestShardIndex(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	for _, tc := range []struct {
		name    string
		flag    int
		flagSet bool
		getenv  func(string) string
		want    int
		errHas  string
	}{
		{"flag", 3, true, env(EnvJobCompletionIndex, "1", EnvSlurmArrayTaskID, "2"), 3, ""},
		{"flag zero beats the environment", 0, true, env(EnvJobCompletionIndex, "1"), 0, ""},
		{"kubernetes", 0, false, env(EnvJobCompletionIndex, "2", EnvSlurmArrayTaskID, "1"), 2, ""},
		{"slurm", 0, false, env(EnvSlurmArrayTaskID, "3"), 3, ""},
		{"slurm with an offset", 0, false, env(EnvSlurmArrayTaskID, "5", EnvSlurmArrayTaskMin, "2"), 3, ""},
		{"none", 0, false, env(), 0, "no shard index"},
		{"flag out of range", 4, true, env(), 0, "out of range"},
		{"negative flag", -1, true, env(), 0, "out of range"},
		{"kubernetes out of range", 0, false, env(EnvJobCompletionIndex, "4"), 0, "from " + EnvJobCompletionIndex},
		{"slurm below its minimum", 0, false, env(EnvSlurmArrayTaskID, "1", EnvSlurmArrayTaskMin, "2"), 0, "out of range"},
		{"not an integer", 0, false, env(EnvJobCompletionIndex, "x"), 0, "not an integer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ShardIndex("stats", 4, tc.flag, tc.flagSet, tc.getenv)
			if tc.errHas == "" {
				if err != nil || got != tc.want {
					t.Fatalf("got %d, %v; want %d", got, err, tc.want)
				}
				return
			}
			var fe *fault.FieldError
			if !errors.As(err, &fe) || fe.Field != "shard" {
				t.Fatalf("err %v: want a field error on {shard}", err)
			}
			msg := fe.Render(func(f string) string { return "--" + f })
			for _, want := range []string{tc.errHas, "--shard", EnvJobCompletionIndex, EnvSlurmArrayTaskID} {
				if !strings.Contains(msg, want) {
					t.Errorf("message %q lacks %q", msg, want)
				}
			}
		})
	}
}

func TestShardOfSplitsEveryNameOnce(t *testing.T) {
	const k = 7
	counts := make([]int, k)
	for i := 0; i < 7000; i++ {
		s := ShardOf(fmt.Sprintf("img%05d.png", i), k)
		if s != ShardOf(fmt.Sprintf("img%05d.png", i), k) {
			t.Fatal("ShardOf is not deterministic")
		}
		counts[s]++
	}
	for i, c := range counts {
		// 1000 expected; 5 standard deviations of a binomial is about 150.
		if c < 850 || c > 1150 {
			t.Errorf("shard %d holds %d of 7000 names, want about 1000", i, c)
		}
	}
	// The split depends on the relative path alone: the same folder
	// elsewhere, listed in another order, splits alike.
	a := []string{"/data/x/b.png", "/data/x/a.png", "/data/x/sub/c.png"}
	b := []string{"/mnt/y/sub/c.png", "/mnt/y/a.png", "/mnt/y/b.png"}
	la, ma, err := folderShard("/data/x", a, 1, 3)
	if err != nil {
		t.Fatal(err)
	}
	lb, mb, err := folderShard("/mnt/y", b, 1, 3)
	if err != nil {
		t.Fatal(err)
	}
	if la != lb || len(ma) != len(mb) {
		t.Fatalf("listings differ: %+v %v vs %+v %v", la, ma, lb, mb)
	}
}

// writeArtifact renders an artifact into fsys under name.
func writeArtifact(t *testing.T, fsys fstest.MapFS, name string, a job.Artifact) {
	t.Helper()
	var buf bytes.Buffer
	if err := a.Write(&buf); err != nil {
		t.Fatal(err)
	}
	fsys[name] = &fstest.MapFile{Data: buf.Bytes()}
}

func relFrob(a, b []float64) float64 {
	var num, den float64
	for i := range a {
		num += (a[i] - b[i]) * (a[i] - b[i])
		den += b[i] * b[i]
	}
	return math.Sqrt(num / den)
}

func symData(s *mat.SymDense) []float64 {
	d := s.SymmetricDim()
	out := make([]float64, 0, d*d)
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			out = append(out, s.At(i, j))
		}
	}
	return out
}

// TestFolderStatsShardsMerge: the statistics merged from the parts of a
// folder equal the unsharded folder statistics to 1e-9 relative, for
// several shard counts (some shards of 16 images over 5 may be empty).
func TestFolderStatsShardsMerge(t *testing.T) {
	dir := shareddata.Path(t, "fixtures/inception_random")
	t.Setenv("GENLENS_CACHE", t.TempDir())
	fsys := fstest.MapFS{}
	for i := 0; i < 16; i++ {
		b, err := os.ReadFile(filepath.Join(dir, "images", fmt.Sprintf("img%03d.png", i)))
		if err != nil {
			t.Fatal(err)
		}
		fsys[fmt.Sprintf("imgs/img%03d.png", i)] = &fstest.MapFile{Data: b}
	}
	weights := filepath.Join(dir, "inception_random.pth")
	env := job.Env{Models: testModels, FS: fsys}
	ctx := context.Background()
	req := NewStatsRequest()
	req.In, req.Dims, req.Weights = "imgs", "64", weights
	whole, err := Stats(ctx, env, req)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []int{1, 2, 5} {
		var parts []string
		for i := 0; i < k; i++ {
			r := req
			r.Shards, r.Shard = k, i
			res, err := Stats(ctx, env, r)
			if err != nil {
				t.Fatal(err)
			}
			if res.Part == nil || res.Part.Prov.Embedder != "inception-v3" || res.Part.Prov.Dims != "64" || len(res.Part.Prov.Weights) != 64 {
				t.Fatalf("part provenance %+v", res.Part)
			}
			name := fmt.Sprintf("parts%d/part-%d.npz", k, i)
			writeArtifact(t, fsys, name, res.Artifact("part.npz"))
			parts = append(parts, name)
		}
		m, err := StatsMerge(ctx, env, StatsMergeRequest{Parts: parts})
		if err != nil {
			t.Fatal(err)
		}
		em := relFrob(m.Stats.Mu, whole.Stats.Mu)
		es := relFrob(symData(m.Stats.Sigma), symData(whole.Stats.Sigma))
		t.Logf("K=%d: relative difference mean %.2g, sigma %.2g", k, em, es)
		if m.N != 16 || em > 1e-9 || es > 1e-9 {
			t.Errorf("K=%d: n %d, relative difference mean %.3g, sigma %.3g; want 16 and <= 1e-9", k, m.N, em, es)
		}
	}
}

// featureParts writes the parts of a sharded feature file into fsys.
func featureParts(t *testing.T, fsys fstest.MapFS, in, prefix string, k int) []string {
	t.Helper()
	var names []string
	for i := 0; i < k; i++ {
		r := NewStatsRequest()
		r.In, r.Shards, r.Shard = in, k, i
		res, err := Stats(context.Background(), job.Env{Models: testModels, FS: fsys}, r)
		if err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("%s-%d.npz", prefix, i)
		writeArtifact(t, fsys, name, res.Artifact(name))
		names = append(names, name)
	}
	return names
}

func npyOf(t *testing.T, x *mat.Dense) []byte {
	t.Helper()
	p := filepath.Join(t.TempDir(), "x.npy")
	r, c := x.Dims()
	if err := dataio.WriteNPY(p, &dataio.Array{Shape: []int{r, c}, Data: x.RawMatrix().Data}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestStatsMergeFeatureFileAndRefusals(t *testing.T) {
	x := mat.NewDense(40, 3, nil)
	y := mat.NewDense(40, 3, nil)
	for i := 0; i < 40; i++ {
		for j := 0; j < 3; j++ {
			x.Set(i, j, 1e4+math.Sin(float64(7*i+j)))
			y.Set(i, j, math.Cos(float64(5*i+j)))
		}
	}
	fsys := fstest.MapFS{"x.npy": {Data: npyOf(t, x)}, "y.npy": {Data: npyOf(t, y)}}
	ctx := context.Background()
	env := job.Env{Models: testModels, FS: fsys}
	whole, err := Stats(ctx, env, statsOf("x.npy"))
	if err != nil {
		t.Fatal(err)
	}
	parts := featureParts(t, fsys, "x.npy", "px", 7)
	m, err := StatsMerge(ctx, env, StatsMergeRequest{Parts: parts})
	if err != nil {
		t.Fatal(err)
	}
	if e := relFrob(symData(m.Stats.Sigma), symData(whole.Stats.Sigma)); e > 1e-9 || m.N != 40 || m.Embedder != "features" || len(m.Missing) != 0 {
		t.Fatalf("merged: n %d, sigma relative difference %.3g, %+v", m.N, e, m)
	}
	// Reversed arguments: the same bits.
	rev := make([]string, len(parts))
	for i, p := range parts {
		rev[len(parts)-1-i] = p
	}
	m2, err := StatsMerge(ctx, env, StatsMergeRequest{Parts: rev})
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(m.Stats.Sigma, m2.Stats.Sigma) || !slicesEqual(m.Stats.Mu, m2.Stats.Mu) {
		t.Fatal("the order of the parts changed the merge")
	}
	// Two arrays of one archive are two inputs.
	fsys["xy.npz"] = &fstest.MapFile{Data: npzOf(t, map[string]*mat.Dense{"x": x, "y": y})}
	var keyed []string
	for _, key := range []string{"x", "y"} {
		for i := 0; i < 2; i++ {
			req := statsOf("xy.npz")
			req.Key, req.Shards, req.Shard = key, 2, i
			res, err := Stats(ctx, env, req)
			if err != nil {
				t.Fatal(err)
			}
			name := fmt.Sprintf("key-%s-%d.npz", key, i)
			writeArtifact(t, fsys, name, res.Artifact(name))
			keyed = append(keyed, name)
		}
	}
	if _, err := StatsMerge(ctx, env, StatsMergeRequest{Parts: []string{keyed[0], keyed[3]}}); err == nil || !strings.Contains(err.Error(), "different input") {
		t.Errorf("shards of two arrays of one archive merged: %v", err)
	}
	other := featureParts(t, fsys, "y.npy", "py", 7)
	k3 := featureParts(t, fsys, "x.npy", "k3", 3)
	fsys["copy-2.npz"] = fsys[parts[2]]
	for _, tc := range []struct {
		name   string
		parts  []string
		field  string // a field error on it, else an input error
		naming string
	}{
		{"same path twice", append([]string{parts[0]}, parts...), "", parts[0]},
		{"same shard twice", append(append([]string{}, parts...), "copy-2.npz"), "", "copy-2.npz"},
		{"missing shard", append(append([]string{}, parts[:3]...), parts[4:]...), "parts", "missing shard 3 of 7"},
		{"other input", append(append([]string{}, parts[:6]...), other[6]), "", other[6]},
		{"other shard count", append(append([]string{}, parts...), k3[0]), "", k3[0]},
		{"not a part", []string{"x.npy"}, "", "x.npy"},
	} {
		_, err := StatsMerge(ctx, env, StatsMergeRequest{Parts: tc.parts})
		if err == nil {
			t.Errorf("%s: merged", tc.name)
			continue
		}
		if k := fault.Classify(err); k != fault.KindField && k != fault.KindInput {
			t.Errorf("%s: %v is %v, want bad input", tc.name, err, k)
		}
		var fe *fault.FieldError
		if tc.field != "" && (!errors.As(err, &fe) || fe.Field != tc.field) {
			t.Errorf("%s: %v: want a field error on %s", tc.name, err, tc.field)
		}
		if !strings.Contains(err.Error(), tc.naming) {
			t.Errorf("%s: %q does not name %q", tc.name, err, tc.naming)
		}
	}
	// --allow-missing merges what is there and says what is not.
	var warned string
	part, err := StatsMerge(ctx, job.Env{Models: testModels, FS: fsys, Warn: func(s string) { warned = s }}, StatsMergeRequest{Parts: parts[1:], AllowMissing: true})
	if err != nil {
		t.Fatal(err)
	}
	lo, _ := ShardRows(40, 1, 7)
	if part.N != 40-lo || len(part.Missing) != 1 || part.Missing[0] != 0 || !strings.Contains(warned, "missing 0") {
		t.Fatalf("allow missing: n %d, missing %v, warning %q", part.N, part.Missing, warned)
	}
}

func npzOf(t *testing.T, arrays map[string]*mat.Dense) []byte {
	t.Helper()
	p := filepath.Join(t.TempDir(), "x.npz")
	m := map[string]*dataio.Array{}
	for k, x := range arrays {
		r, c := x.Dims()
		m[k] = &dataio.Array{Shape: []int{r, c}, Data: x.RawMatrix().Data}
	}
	if err := dataio.WriteNPZ(p, m, false); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func slicesEqual(a, b []float64) bool {
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return len(a) == len(b)
}

// TestFeatureFilesPattern: a quoted pattern reads every matching feature
// file, in sorted order, as one set of rows.
func TestFeatureFilesPattern(t *testing.T) {
	x := mat.NewDense(10, 2, nil)
	for i := 0; i < 10; i++ {
		x.Set(i, 0, float64(i))
		x.Set(i, 1, float64(i*i%7))
	}
	fsys := fstest.MapFS{
		"all.npy":       {Data: npyOf(t, x)},
		"parts/a.npy":   {Data: npyOf(t, mat.DenseCopyOf(x.Slice(0, 4, 0, 2)))},
		"parts/b.npy":   {Data: npyOf(t, mat.DenseCopyOf(x.Slice(4, 10, 0, 2)))},
		"parts/c.csv":   {Data: []byte("1,2\n")},
		"bad/a.npy":     {Data: npyOf(t, x)},
		"bad/b.npy":     {Data: npyOf(t, mat.NewDense(2, 3, []float64{1, 2, 3, 4, 5, 6}))},
		"parts/notes.t": {Data: []byte("x")},
	}
	ctx := context.Background()
	env := job.Env{Models: testModels, FS: fsys}
	whole, err := Stats(ctx, env, statsOf("all.npy"))
	if err != nil {
		t.Fatal(err)
	}
	glob, err := Stats(ctx, env, statsOf("parts/*.npy"))
	if err != nil {
		t.Fatal(err)
	}
	if glob.N != 10 || relFrob(symData(glob.Stats.Sigma), symData(whole.Stats.Sigma)) > 1e-14 {
		t.Fatalf("pattern: n %d, sigma %v vs %v", glob.N, glob.Stats.Sigma, whole.Stats.Sigma)
	}
	if _, err := Stats(ctx, env, statsOf("nothing/*.npy")); err == nil || !strings.Contains(err.Error(), "no file matches") {
		t.Errorf("no match: %v", err)
	}
	if _, err := Stats(ctx, env, statsOf("bad/*.npy")); err == nil || !strings.Contains(err.Error(), "bad/b.npy") {
		t.Errorf("mixed columns: %v", err)
	}
	// compare takes patterns on both sides.
	req := NewCompareRequest()
	req.Real, req.Fake = "all.npy", "parts/*.npy"
	res, err := Compare(ctx, env, req)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(float64(*res.FID)) > 1e-9 {
		t.Errorf("FID of a set against its own parts: %v", *res.FID)
	}
}

// statsOf returns the request of `genlens stats IN` with its defaults.
func statsOf(in string) StatsRequest {
	r := NewStatsRequest()
	r.In = in
	return r
}
