package main

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/genlens/genlens/dataio"
)

func gaussPool(r *rand.Rand, n, d int, scale float64) []float64 {
	v := make([]float64, n*d)
	for i := range v {
		v[i] = scale * r.NormFloat64()
	}
	return v
}

func TestSelectFID(t *testing.T) {
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(1, 2))
	ref := writeArray(t, dir, "ref.npy", []int{400, 4}, gaussPool(r, 400, 4, 1))
	var pools []string
	for i, s := range []float64{0.3, 1.0, 1.8} {
		pools = append(pools, writeArray(t, dir, "g"+string(rune('0'+i))+".npy", []int{200, 4}, gaussPool(r, 200, 4, s)))
	}
	outDir := filepath.Join(dir, "sel")
	args := append([]string{"select", "--score", "fid", "--ref", ref, "--steps", "60", "--trials", "3", "--json", "--out", outDir, "--pools"}, pools...)
	code, stdout, stderr := cli(t, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var out struct {
		Best       int
		Scores     []float64
		Algorithms map[string]struct {
			RegretFinal           struct{ Mean, Std float64 } `json:"regret_final"`
			OptimalPickRatioFinal struct{ Mean, Std float64 } `json:"optimal_pick_ratio_final"`
			Picks                 []float64
		}
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatal(err)
	}
	if out.Best != 1 || len(out.Scores) != 3 || !(out.Scores[1] < out.Scores[0] && out.Scores[1] < out.Scores[2]) {
		t.Errorf("best %d scores %v, want generator 1 (scale 1.0) best", out.Best, out.Scores)
	}
	for _, name := range []string{"fid-ucb", "naive-ucb", "greedy"} {
		a, ok := out.Algorithms[name]
		if !ok {
			t.Fatalf("no %s in %v", name, out.Algorithms)
		}
		var picks float64
		for _, p := range a.Picks {
			picks += p
		}
		if math.Abs(picks-60) > 1e-9 || a.OptimalPickRatioFinal.Mean < 0 || a.OptimalPickRatioFinal.Mean > 1 || a.RegretFinal.Mean < 0 {
			t.Errorf("%s: %+v", name, a)
		}
	}
	checkOutputs(t, outDir, selectOutputs)
	// Same seed, same result.
	if _, again, _ := cli(t, args...); again != stdout {
		t.Error("select is not reproducible for a fixed seed")
	}
}

func TestSelectIS(t *testing.T) {
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(3, 4))
	// Pool 0: confident, diverse predictions (high IS); pool 1: uniform rows (IS 1).
	k := 5
	p0, p1 := make([]float64, 100*k), make([]float64, 100*k)
	for i := 0; i < 100; i++ {
		c := r.IntN(k)
		for j := 0; j < k; j++ {
			p1[i*k+j] = 1 / float64(k)
			p0[i*k+j] = 0.02
		}
		p0[i*k+c] = 1 - 0.02*float64(k-1)
	}
	a := writeArray(t, dir, "p0.npy", []int{100, k}, p0)
	b := writeArray(t, dir, "p1.npy", []int{100, k}, p1)
	code, stdout, stderr := cli(t, "select", "--score", "is", "--steps", "30", "--trials", "2", "--json", "--pools", a, b)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var out struct {
		Best       int
		Scores     []float64
		Algorithms map[string]json.RawMessage
	}
	json.Unmarshal([]byte(stdout), &out)
	if out.Best != 0 || math.Abs(out.Scores[1]-1) > 1e-9 || len(out.Algorithms) != 3 {
		t.Errorf("%s", stdout)
	}
	if _, ok := out.Algorithms["is-ucb"]; !ok {
		t.Errorf("no is-ucb: %s", stdout)
	}
}

func TestSelectBadInput(t *testing.T) {
	dir := t.TempDir()
	small := writeArray(t, dir, "small.npy", []int{3, 2}, []float64{1, 2, 3, 4, 5, 6})
	ok := writeArray(t, dir, "ok.npy", []int{10, 2}, make([]float64, 20))
	d3 := writeArray(t, dir, "d3.npy", []int{10, 3}, make([]float64, 30))
	probs := writeArray(t, dir, "probs.npy", []int{6, 2}, []float64{0.5, 0.5, 0.5, 0.5, -0.1, 1.1, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5})
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"pool smaller than batch", []string{"select", "--ref", ok, "--pools", small, ok}, "small.npy"},
		{"pool dims", []string{"select", "--ref", ok, "--pools", ok, d3}, "d3.npy"},
		{"ref dims", []string{"select", "--ref", d3, "--pools", ok, ok}, "ok.npy"},
		{"no ref", []string{"select", "--pools", ok, ok}, "--ref"},
		{"bad probs", []string{"select", "--score", "is", "--pools", probs, probs}, "probs.npy row 3"},
		{"bad algo", []string{"select", "--ref", ok, "--algos", "fid-ucb,magic", "--pools", ok, ok}, "magic"},
		{"one pool", []string{"select", "--ref", ok, "--pools", ok}, "at least 2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, _, stderr := cli(t, c.args...)
			if code != 2 || !strings.Contains(stderr, c.want) {
				t.Errorf("exit %d, stderr %q, want 2 and %q", code, stderr, c.want)
			}
		})
	}
}

// TestSelectUsageAndInput: repeated algorithms are bad usage; pools of one
// class, reference statistics that are no covariance, and .npz inputs
// without a key are the files' fault (exit 2, naming them); --ref-key and
// --pools-key read arrays of rows from .npz files.
func TestSelectUsageAndInput(t *testing.T) {
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(13, 14))
	refRows := gaussPool(r, 60, 3, 1)
	poolRows := [][]float64{gaussPool(r, 40, 3, 0.5), gaussPool(r, 40, 3, 1)}
	ref := writeArray(t, dir, "ref.npy", []int{60, 3}, refRows)
	p0 := writeArray(t, dir, "p0.npy", []int{40, 3}, poolRows[0])
	p1 := writeArray(t, dir, "p1.npy", []int{40, 3}, poolRows[1])
	one := writeArray(t, dir, "oneclass.npy", []int{10, 1}, slices.Repeat([]float64{1}, 10))
	labels := &dataio.Array{Shape: []int{2}, Data: []float64{0, 1}}
	refz := writeNPZ(t, dir, "ref.npz", map[string]*dataio.Array{"feats": {Shape: []int{60, 3}, Data: refRows}, "labels": labels})
	p0z := writeNPZ(t, dir, "p0.npz", map[string]*dataio.Array{"feats": {Shape: []int{40, 3}, Data: poolRows[0]}, "labels": labels})
	p1z := writeNPZ(t, dir, "p1.npz", map[string]*dataio.Array{"feats": {Shape: []int{40, 3}, Data: poolRows[1]}, "labels": labels})
	sigma := func(v ...float64) map[string]*dataio.Array {
		return map[string]*dataio.Array{"mu": {Shape: []int{3}, Data: []float64{0, 0, 0}}, "sigma": {Shape: []int{3, 3}, Data: v}}
	}
	pair := writeNPZ(t, dir, "pair.npz", sigma(1, 3, 0, 3, 1, 0, 0, 0, 1))
	tri := writeNPZ(t, dir, "tri.npz", sigma(1, 0.9, -0.9, 0.9, 1, 0.9, -0.9, 0.9, 1))
	run := []string{"--steps", "10", "--trials", "2", "--json"}

	_, want, stderr := cli(t, append([]string{"select", "--ref", ref, "--pools", p0, p1}, run...)...)
	if want == "" {
		t.Fatal(stderr)
	}
	code, got, stderr := cli(t, append([]string{"select", "--ref", refz, "--ref-key", "feats", "--pools-key", "feats", "--pools", p0z, p1z}, run...)...)
	if code != 0 || got != want {
		t.Errorf("--ref-key, --pools-key: exit %d (%s)\n%s\nwant\n%s", code, stderr, got, want)
	}

	for _, c := range []struct {
		name string
		args []string
		want []string
	}{
		{"algorithm twice", []string{"--ref", ref, "--algos", "fid-ucb,greedy,fid-ucb", "--pools", p0, p1}, []string{"--algos", "fid-ucb twice"}},
		{"algorithm twice, spaced", []string{"--score", "is", "--algos", "is-ucb, is-ucb", "--pools", one, one}, []string{"is-ucb twice"}},
		{"empty algorithm", []string{"--ref", ref, "--algos", "fid-ucb,", "--pools", p0, p1}, []string{"--algos", "empty"}},
		{"one class", []string{"--score", "is", "--pools", one, one}, []string{"oneclass.npy", "1 class", "at least 2 classes"}},
		{"ref stats entry beyond its variances", []string{"--ref", pair, "--pools", p0, p1}, []string{"pair.npz", `key "sigma" row 1: sigma[0][1]`, "not positive semidefinite"}},
		{"ref stats indefinite", []string{"--ref", tri, "--pools", p0, p1}, []string{"tri.npz", `key "sigma"`, "not positive semidefinite"}},
		{"ref npz without key", []string{"--ref", refz, "--pools", p0, p1}, []string{"ref.npz", "feats, labels", "no statistics (mu, sigma)", "--ref-key"}},
		{"pool npz without key", []string{"--ref", ref, "--pools", p0z, p1z}, []string{"p0.npz", "feats, labels", "--pools-key"}},
		{"ref-key with is", []string{"--score", "is", "--ref-key", "feats", "--pools", one, one}, []string{"--ref", "IS needs no reference"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, _, stderr := cli(t, append(append([]string{"select"}, c.args...), run...)...)
			requireUsageError(t, code, stderr, c.want...)
		})
	}
}

// The table counts generators from 1, as the pools are named, and says
// which; the help names every file --out writes, select.json included.
func TestSelectTableCountsFromOne(t *testing.T) {
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(1, 2))
	ref := writeArray(t, dir, "ref.npy", []int{400, 4}, gaussPool(r, 400, 4, 1))
	var pools []string
	for i, s := range []float64{0.3, 1.0, 1.8} {
		pools = append(pools, writeArray(t, dir, "g"+string(rune('1'+i))+".npy", []int{200, 4}, gaussPool(r, 200, 4, s)))
	}
	code, stdout, stderr := cli(t, append([]string{"select", "--score", "fid", "--ref", ref, "--steps", "30", "--trials", "2", "--pools"}, pools...)...)
	if want := "best on its whole pool: generator 2 of 3 (" + pools[1] + ", fid = "; code != 0 || !strings.Contains(stdout, want) {
		t.Errorf("exit %d (%s)\n%s\nwant %q", code, stderr, stdout, want)
	}
	_, help, _ := cli(t, "select", "--help")
	long := help[:strings.Index(help, "Usage:")]
	for _, name := range selectOutputs {
		if !strings.Contains(long, name) {
			t.Errorf("select --help does not say --out writes %s:\n%s", name, long)
		}
	}
}
