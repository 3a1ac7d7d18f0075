package main

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/metric/frechet"
	"github.com/genlens/genlens/metric/kernel"
	"github.com/genlens/genlens/metric/kscore"
)

func randRows(r *rand.Rand, n, d int, shift float64) []float64 {
	v := make([]float64, n*d)
	for i := range v {
		v[i] = r.NormFloat64() + shift
	}
	return v
}

func TestCompareMatchesPackages(t *testing.T) {
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(1, 2))
	rd, fd := randRows(r, 60, 5, 0), randRows(r, 50, 5, 0.3)
	real := writeArray(t, dir, "real.npy", []int{60, 5}, rd)
	fake := writeArray(t, dir, "fake.npy", []int{50, 5}, fd)
	code, stdout, stderr := cli(t, "compare", "--real", real, "--fake", fake, "--metrics", "all", "--gamma", "0.2", "--kid-subsets", "10", "--kid-subset-size", "40", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var out struct {
		FID  float64
		KID  struct{ Mean, Std float64 }
		MMD2 float64
		CMS  float64
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatal(err)
	}
	x, y := mat.NewDense(60, 5, rd), mat.NewDense(50, 5, fd)
	fid, _ := frechet.Distance(frechet.StatsOf(x, 1), frechet.StatsOf(y, 1))
	km, ks, _ := frechet.KID(context.Background(), x, y, 10, 40, 1)
	mmd, _ := kscore.MMD2(kernel.RBF{Gamma: 0.2}, x, y)
	cms, _ := kscore.CMS(kernel.RBF{Gamma: 0.2}, x, y)
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"fid", out.FID, fid}, {"kid.mean", out.KID.Mean, km}, {"kid.std", out.KID.Std, ks}, {"mmd2", out.MMD2, mmd}, {"cms", out.CMS, cms}} {
		if math.Abs(c.got-c.want) > 1e-12*max(1, math.Abs(c.want)) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if fid < 0.2 {
		t.Errorf("shifted sets should have FID well above 0, got %v", fid)
	}

	// stats file round trip: FID from the file equals FID from the rows.
	st := filepath.Join(dir, "real_stats.npz")
	if code, _, stderr := cli(t, "stats", "--in", real, "--out", st); code != 0 {
		t.Fatalf("stats: exit %d: %s", code, stderr)
	}
	code, stdout, stderr = cli(t, "compare", "--real", st, "--fake", fake, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var fromStats map[string]any
	json.Unmarshal([]byte(stdout), &fromStats)
	if got := fromStats["fid"].(float64); math.Abs(got-fid) > 1e-9*fid {
		t.Errorf("fid from stats %v, from rows %v", got, fid)
	}
	if _, ok := fromStats["kid"]; ok {
		t.Errorf("kid computed from a stats file: %v", fromStats)
	}
	// Asking for kid with a stats file is bad usage.
	if code, _, stderr := cli(t, "compare", "--real", st, "--fake", fake, "--metrics", "kid"); code != 2 || !strings.Contains(stderr, "statistics") {
		t.Errorf("exit %d: %s", code, stderr)
	}
}

func TestISCommand(t *testing.T) {
	dir := t.TempDir()
	// Distinct one-hot rows over 4 classes, one split: IS = 4.
	p := writeArray(t, dir, "p.npy", []int{4, 4}, []float64{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1})
	code, stdout, stderr := cli(t, "is", "--probs", p, "--splits", "1", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var out struct{ IS struct{ Mean, Std float64 } }
	json.Unmarshal([]byte(stdout), &out)
	if math.Abs(out.IS.Mean-4) > 1e-12 || out.IS.Std != 0 {
		t.Errorf("IS = %+v, want 4 ± 0", out.IS)
	}
	bad := writeArray(t, dir, "bad.npy", []int{3, 2}, []float64{0.5, 0.5, 0.7, 0.2, 1, 0})
	code, _, stderr = cli(t, "is", "--probs", bad, "--splits", "1")
	if code != 2 || !strings.Contains(stderr, "bad.npy") || !strings.Contains(stderr, "row 2") {
		t.Errorf("exit %d: %q", code, stderr)
	}

	// Rows 4e-6 off 1, as float32 softmax output is: refused by default
	// with a hint, accepted and rescaled with a looser --tolerance, so IS
	// is that of the exact distributions (here 2, two distinct one-hots
	// scaled by 1 + 4e-6 would give a different KL).
	off := writeArray(t, dir, "f32.npy", []int{2, 2}, []float64{1 + 4e-6, 0, 0, 1 - 4e-6})
	code, _, stderr = cli(t, "is", "--probs", off, "--splits", "1")
	if code != 2 || !strings.Contains(stderr, "f32.npy row 1") || !strings.Contains(stderr, "--tolerance 1e-4") {
		t.Errorf("default tolerance: exit %d: %q", code, stderr)
	}
	code, stdout, stderr = cli(t, "is", "--probs", off, "--splits", "1", "--tolerance", "1e-4", "--json")
	json.Unmarshal([]byte(stdout), &out)
	if code != 0 || math.Abs(out.IS.Mean-2) > 1e-15 {
		t.Errorf("--tolerance 1e-4: exit %d, IS %v (want exactly 2), %s", code, out.IS, stderr)
	}
	if code, _, stderr = cli(t, "is", "--probs", off, "--tolerance", "2"); code != 2 {
		t.Errorf("--tolerance 2: exit %d: %s", code, stderr)
	}
}

func TestFidelityBadInput(t *testing.T) {
	dir := t.TempDir()
	a := writeArray(t, dir, "a.npy", []int{3, 2}, []float64{1, 2, 3, 4, 5, 7})
	b := writeArray(t, dir, "b.npy", []int{3, 3}, []float64{1, 2, 3, 4, 5, 6, 7, 8, 9})
	one := writeArray(t, dir, "one.npy", []int{1, 2}, []float64{1, 2})
	nosigma := filepath.Join(dir, "nosigma.npz")
	if err := dataio.WriteNPZ(nosigma, map[string]*dataio.Array{"mu": {Shape: []int{2}, Data: []float64{0, 0}}}, false); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"dims", []string{"compare", "--real", a, "--fake", b}, "a.npy"},
		{"one row", []string{"compare", "--real", a, "--fake", one}, "one.npy"},
		{"stats without sigma", []string{"compare", "--real", nosigma, "--fake", a, "--metrics", "fid"}, "sigma"},
		{"unknown metric", []string{"compare", "--real", a, "--fake", a, "--metrics", "fud"}, "fud"},
		{"stats out not npz", []string{"stats", "--in", a, "--out", filepath.Join(dir, "s.npy")}, "npz"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, _, stderr := cli(t, c.args...)
			if code != 2 || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
				t.Errorf("exit %d, stderr %q (want 2 and %q)", code, stderr, c.want)
			}
		})
	}
}

// writeNPZ writes arrays as an .npz in dir.
func writeNPZ(t *testing.T, dir, name string, arrays map[string]*dataio.Array) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := dataio.WriteNPZ(p, arrays, false); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCompareNotPSDStats: a stats file whose sigma is no covariance is the
// file's fault (exit 2, one line naming it), never "fid": 0.
func TestCompareNotPSDStats(t *testing.T) {
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(5, 6))
	fake2 := writeArray(t, dir, "x2.npy", []int{30, 2}, randRows(r, 30, 2, 0))
	fake3 := writeArray(t, dir, "x3.npy", []int{30, 3}, randRows(r, 30, 3, 0))
	stats := func(name string, mu, sigma []float64) string {
		d := len(mu)
		return writeNPZ(t, dir, name, map[string]*dataio.Array{"mu": {Shape: []int{d}, Data: mu}, "sigma": {Shape: []int{d, d}, Data: sigma}})
	}
	// Eigenvalues 4 and -2: |sigma[0][1]| > √(sigma[0][0]·sigma[1][1]).
	pair := stats("indef.npz", []float64{0, 0}, []float64{1, 3, 3, 1})
	// Every entry within its variances, still indefinite.
	tri := stats("tri.npz", []float64{0, 0, 0}, []float64{1, 0.9, -0.9, 0.9, 1, 0.9, -0.9, 0.9, 1})
	triFar := stats("trifar.npz", []float64{100, -100, 100}, []float64{1, 0.9, -0.9, 0.9, 1, 0.9, -0.9, 0.9, 1})
	for _, c := range []struct {
		name string
		args []string
		want []string
	}{
		{"entry beyond its variances", []string{"compare", "--real", pair, "--fake", fake2}, []string{"indef.npz", `key "sigma" row 1: sigma[0][1]`, "not positive semidefinite"}},
		{"entry beyond its variances, json", []string{"compare", "--real", pair, "--fake", fake2, "--json"}, []string{"indef.npz", "not positive semidefinite"}},
		{"indefinite", []string{"compare", "--real", tri, "--fake", fake3}, []string{"tri.npz", `key "sigma"`, "not positive semidefinite"}},
		{"indefinite, means far apart", []string{"compare", "--real", triFar, "--fake", fake3, "--metrics", "fid"}, []string{"trifar.npz", "not positive semidefinite"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := cli(t, c.args...)
			// Under --json the error is a JSON document on stdout too.
			var doc struct{ Kind string }
			jsonOK := !strings.Contains(c.name, "json") && stdout == "" ||
				strings.Contains(c.name, "json") && json.Unmarshal([]byte(stdout), &doc) == nil && doc.Kind == "input"
			if code != 2 || !jsonOK || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit 2 and one line", code, stdout, stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q lacks %q", stderr, w)
				}
			}
		})
	}
}

// TestCompareFlagsThatDoNotApply: KID flags are checked only when kid is
// asked for; --gamma with a kernel that has no bandwidth, and kernel flags
// when no kernel metric is asked for, are usage errors, not silently ignored.
func TestCompareFlagsThatDoNotApply(t *testing.T) {
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(7, 8))
	a := writeArray(t, dir, "a.npy", []int{20, 3}, randRows(r, 20, 3, 0))
	b := writeArray(t, dir, "b.npy", []int{20, 3}, randRows(r, 20, 3, 1))
	for _, c := range []struct {
		name string
		args []string
		code int
		msg  string // in stderr when code is 2
	}{
		{"fid with --kid-subsets 0", []string{"--metrics", "fid", "--kid-subsets", "0"}, 0, ""},
		{"mmd,cms with --kid-subset-size 1", []string{"--metrics", "mmd,cms", "--kid-subset-size", "1"}, 0, ""},
		{"kid with --kid-subsets 0", []string{"--metrics", "fid,kid", "--kid-subsets", "0"}, 2, "--kid-subset"},
		{"all metrics with --kid-subset-size 1", []string{"--metrics", "all", "--kid-subset-size", "1"}, 2, "--kid-subset"},
		// Beyond any memory: a field error, never a makeslice panic.
		{"kid with --kid-subsets 9e18", []string{"--metrics", "kid", "--kid-subsets", "9000000000000000000"}, 2, "--kid-subsets 9000000000000000000: at most"},
		{"kid with --kid-subset-size 9e18", []string{"--metrics", "kid", "--kid-subset-size", "9000000000000000000"}, 2, "--kid-subset-size 9000000000000000000: at most"},
		// The default is fid alone, which uses no kernel.
		{"default metrics with --kid-subset-size 1", []string{"--kid-subset-size", "1"}, 0, ""},
		{"default metrics with --kernel", []string{"--kernel", "laplacian"}, 2, "--kernel"},
		{"image flags on feature files", []string{"--mode", "tf"}, 2, "--mode applies only to folders"},
		{"rbf with gamma", []string{"--metrics", "mmd", "--kernel", "rbf", "--gamma", "0.5"}, 0, ""},
		{"linear with gamma", []string{"--metrics", "mmd", "--kernel", "linear", "--gamma", "0.5"}, 2, "--gamma"},
		{"fid with kernel", []string{"--metrics", "fid", "--kernel", "laplacian"}, 2, "--kernel"},
		{"fid,kid with gamma", []string{"--metrics", "fid,kid", "--gamma", "dim"}, 2, "--gamma"},
		{"prdc,vendi,cmmd", []string{"--metrics", "prdc,vendi,cmmd", "--nearest-k", "3", "--prdc-max-rows", "10"}, 0, ""},
		{"fid with --nearest-k 0", []string{"--metrics", "fid", "--nearest-k", "0"}, 0, ""},
		{"prdc with --nearest-k 0", []string{"--metrics", "prdc", "--nearest-k", "0"}, 2, "--nearest-k 0"},
		{"prdc with --nearest-k above the rows", []string{"--metrics", "prdc", "--nearest-k", "20"}, 2, "20 rows: prdc with k = 20 nearest neighbours"},
		{"fid with --prdc-max-rows", []string{"--prdc-max-rows", "10"}, 2, "--prdc-max-rows applies only to --metrics prdc"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, _, stderr := cli(t, append([]string{"compare", "--real", a, "--fake", b}, c.args...)...)
			if code != c.code || !strings.Contains(stderr, c.msg) {
				t.Errorf("exit %d (want %d): %s", code, c.code, stderr)
			}
		})
	}
}

// TestCompareNReal: n_real is the row count of real rows, the recorded
// count of a stats file from 'genlens stats', and null for a pytorch-fid
// file that records none; the metric keys stay as they are.
func TestCompareNReal(t *testing.T) {
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(9, 10))
	real := writeArray(t, dir, "real.npy", []int{40, 3}, randRows(r, 40, 3, 0))
	fake := writeArray(t, dir, "fake.npy", []int{30, 3}, randRows(r, 30, 3, 0.5))
	withN := filepath.Join(dir, "withn.npz")
	if code, _, stderr := cli(t, "stats", "--in", real, "--out", withN); code != 0 {
		t.Fatalf("stats: exit %d: %s", code, stderr)
	}
	s, err := frechet.ReadStats(withN)
	if err != nil {
		t.Fatal(err)
	}
	noN := writeNPZ(t, dir, "pytorch.npz", map[string]*dataio.Array{
		"mu":    {Shape: []int{3}, Data: s.Mu},
		"sigma": {Shape: []int{3, 3}, Data: mat.DenseCopyOf(s.Sigma).RawMatrix().Data},
	})
	for _, c := range []struct {
		name, real string
		want       any // n_real
		metrics    []string
	}{
		{"rows", real, 40.0, []string{"fid", "kid", "mmd2", "cms"}},
		{"stats with n", withN, 40.0, []string{"fid"}},
		{"pytorch-fid stats", noN, nil, []string{"fid"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := cli(t, "compare", "--real", c.real, "--fake", fake, "--metrics", "all", "--kid-subset-size", "15", "--json")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			var out map[string]any
			if err := json.Unmarshal([]byte(stdout), &out); err != nil {
				t.Fatal(err)
			}
			if v, ok := out["n_real"]; !ok || v != c.want {
				t.Errorf("n_real = %v (present %v), want %v", v, ok, c.want)
			}
			if out["n_fake"] != 30.0 || out["dim"] != 3.0 {
				t.Errorf("n_fake, dim = %v, %v", out["n_fake"], out["dim"])
			}
			for _, k := range c.metrics {
				if _, ok := out[k]; !ok {
					t.Errorf("no %q in %s", k, stdout)
				}
			}
			if kid, ok := out["kid"].(map[string]any); ok {
				if _, ok := kid["mean"]; !ok {
					t.Errorf("kid has no mean: %v", kid)
				}
				if _, ok := kid["std"]; !ok {
					t.Errorf("kid has no std: %v", kid)
				}
			}
			code, stdout, _ = cli(t, "compare", "--real", c.real, "--fake", fake)
			if code != 0 || (c.want == nil) != strings.Contains(stdout, "sample count not recorded") || strings.Contains(stdout, "real 0 rows") {
				t.Errorf("text output: %q", stdout)
			}
		})
	}
}

// TestCompareNPZKeys: --real-key and --fake-key choose arrays of rows
// inside .npz files (and give the results of the same arrays as .npy); an
// .npz of several arrays without a key, or without mu and sigma, is
// refused with its members listed and the flag named.
func TestCompareNPZKeys(t *testing.T) {
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(11, 12))
	rd, fd := randRows(r, 40, 3, 0), randRows(r, 30, 3, 0.4)
	real := writeArray(t, dir, "real.npy", []int{40, 3}, rd)
	fake := writeArray(t, dir, "fake.npy", []int{30, 3}, fd)
	labels := &dataio.Array{Shape: []int{4}, Data: []float64{0, 1, 2, 3}}
	realz := writeNPZ(t, dir, "real.npz", map[string]*dataio.Array{"feats": {Shape: []int{40, 3}, Data: rd}, "labels": labels})
	fakez := writeNPZ(t, dir, "fake.npz", map[string]*dataio.Array{"feats": {Shape: []int{30, 3}, Data: fd}, "labels": labels})
	// A stats file with the rows too: a key reads the rows.
	s := frechet.StatsOf(mat.NewDense(40, 3, rd), 1)
	both := writeNPZ(t, dir, "both.npz", map[string]*dataio.Array{
		"mu": {Shape: []int{3}, Data: s.Mu}, "sigma": {Shape: []int{3, 3}, Data: mat.DenseCopyOf(s.Sigma).RawMatrix().Data},
		"feats": {Shape: []int{40, 3}, Data: rd},
	})
	_, want, stderr := cli(t, "compare", "--real", real, "--fake", fake, "--json")
	if want == "" {
		t.Fatal(stderr)
	}
	for _, c := range []struct {
		name string
		args []string
	}{
		{"both keys", []string{"--real", realz, "--real-key", "feats", "--fake", fakez, "--fake-key", "feats"}},
		{"key in a stats file", []string{"--real", both, "--real-key", "feats", "--fake", fake}},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, got, stderr := cli(t, append(append([]string{"compare"}, c.args...), "--json")...)
			if code != 0 || got != want {
				t.Errorf("exit %d (%s)\n%s\nwant\n%s", code, stderr, got, want)
			}
		})
	}
	for _, c := range []struct {
		name string
		args []string
		want []string
	}{
		{"real without key", []string{"--real", realz, "--fake", fake}, []string{"real.npz", "feats, labels", "no statistics (mu, sigma)", "choose one with --real-key"}},
		{"fake without key", []string{"--real", real, "--fake", fakez}, []string{"fake.npz", "feats, labels", "choose one with --fake-key"}},
		{"unknown key", []string{"--real", realz, "--real-key", "nope", "--fake", fake}, []string{"real.npz", "nope"}},
		{"key on npy", []string{"--real", real, "--real-key", "feats", "--fake", fake}, []string{"real.npy", "feats"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, _, stderr := cli(t, append([]string{"compare"}, c.args...)...)
			requireUsageError(t, code, stderr, c.want...)
		})
	}
}

// TestISRowsAndHints: the is command speaks of class-probability rows, and
// suggests a looser --tolerance only for sums that float32 rounding could
// explain.
func TestISRowsAndHints(t *testing.T) {
	dir := t.TempDir()
	one := writeArray(t, dir, "one.npy", []int{1, 3}, []float64{0.2, 0.3, 0.5})
	code, stdout, stderr := cli(t, "is", "--probs", one, "--splits", "1", "--json")
	var out struct{ IS struct{ Mean, Std float64 } }
	json.Unmarshal([]byte(stdout), &out)
	if code != 0 || out.IS.Mean != 1 || out.IS.Std != 0 {
		t.Errorf("one row, one split: exit %d, IS %+v, %s (want 1 ± 0, as frechet.InceptionScore)", code, out.IS, stderr)
	}
	for _, c := range []struct {
		name   string
		args   []string
		want   []string
		unwant string
	}{
		{"one row, 10 splits", []string{"--probs", one}, []string{"one.npy", "1 class-probability row(s)", "--splits 10"}, "feature rows"},
		{"wrong rank", []string{"--probs", writeArray(t, dir, "r1.npy", []int{3}, []float64{0.2, 0.3, 0.5})}, []string{"r1.npy", "class-probability rows (n, classes)"}, "feature"},
		{"float32 rounding", []string{"--splits", "1", "--probs", writeArray(t, dir, "f32.npy", []int{1, 2}, []float64{0.5 + 4e-6, 0.5})}, []string{"f32.npy row 1", "--tolerance 1e-4"}, ""},
		{"few digits", []string{"--splits", "1", "--probs", writeArray(t, dir, "f3.npy", []int{1, 2}, []float64{0.5 + 5e-4, 0.5})}, []string{"f3.npy row 1", "--tolerance 1e-3"}, "float32"},
		{"simply wrong", []string{"--splits", "1", "--probs", writeArray(t, dir, "w.npy", []int{2, 2}, []float64{0.5, 0.5, 0.51, 0.5})}, []string{"w.npy row 2", "sum to 1.01"}, "--tolerance"},
		{"wrong below 1", []string{"--splits", "1", "--probs", writeArray(t, dir, "w2.npy", []int{1, 2}, []float64{0.3, 0.5})}, []string{"w2.npy row 1"}, "--tolerance"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, _, stderr := cli(t, append([]string{"is"}, c.args...)...)
			requireUsageError(t, code, stderr, c.want...)
			if c.unwant != "" && strings.Contains(stderr, c.unwant) {
				t.Errorf("stderr %q says %q", stderr, c.unwant)
			}
		})
	}
}

// TestCompareFakeStats: --fake may be a statistics file too,
// as `python -m pytorch_fid A B` accepts; FID is then the same as with the
// rows, and the text names the side whose sample count is unknown.
func TestCompareFakeStats(t *testing.T) {
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(15, 16))
	rd, fd := randRows(r, 40, 3, 0), randRows(r, 30, 3, 0.5)
	real := writeArray(t, dir, "real.npy", []int{40, 3}, rd)
	fake := writeArray(t, dir, "fake.npy", []int{30, 3}, fd)
	s := frechet.StatsOf(mat.NewDense(30, 3, fd), 1)
	fakeStats := writeNPZ(t, dir, "fake_stats.npz", map[string]*dataio.Array{
		"mu": {Shape: []int{3}, Data: s.Mu}, "sigma": {Shape: []int{3, 3}, Data: mat.DenseCopyOf(s.Sigma).RawMatrix().Data},
	})
	var fromRows, fromStats struct{ FID float64 }
	_, stdout, _ := cli(t, "compare", "--real", real, "--fake", fake, "--metrics", "fid", "--json")
	json.Unmarshal([]byte(stdout), &fromRows)
	code, stdout, stderr := cli(t, "compare", "--real", real, "--fake", fakeStats, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	json.Unmarshal([]byte(stdout), &fromStats)
	if fromRows.FID <= 0 || math.Abs(fromStats.FID-fromRows.FID) > 1e-9*fromRows.FID {
		t.Errorf("FID with fake statistics %v, with fake rows %v", fromStats.FID, fromRows.FID)
	}
	if !strings.Contains(stdout, `"n_fake": null`) || strings.Contains(stdout, "kid") {
		t.Errorf("json: %s", stdout)
	}
	if _, stdout, _ = cli(t, "compare", "--real", real, "--fake", fakeStats); !strings.Contains(stdout, "real 40 rows, fake statistics (sample count not recorded), d = 3") {
		t.Errorf("text: %q", stdout)
	}
	code, _, stderr = cli(t, "compare", "--real", real, "--fake", fakeStats, "--metrics", "mmd")
	requireUsageError(t, code, stderr, "--metrics mmd", "fake_stats.npz", "statistics")
}
