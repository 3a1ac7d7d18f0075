package main

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"genlens/dataio"
	"genlens/frechet"
	"genlens/kernel"
	"genlens/kscore"
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
	code, stdout, stderr := cli(t, "compare", "--real", real, "--fake", fake, "--gamma", "0.2", "--kid-subsets", "10", "--kid-subset-size", "40", "--json")
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
	km, ks, _ := frechet.KID(x, y, 10, 40, 1)
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
