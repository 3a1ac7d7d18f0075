package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/internal/console"
	"github.com/genlens/genlens/internal/console/ptytest"
	"github.com/genlens/genlens/internal/testkit/shareddata"
)

// TestImageFolderCommands runs the folder forms of compare, stats, is and
// select on six fixture images with the random-weight network: flags reach
// the job, the second compare reads every feature from the cache, and
// stats of the folders give the FID of compare.
func TestImageFolderCommands(t *testing.T) {
	fix := shareddata.Path(t, "fixtures/inception_random")
	dir := t.TempDir()
	t.Setenv("GENLENS_CACHE", filepath.Join(dir, "cache"))
	real, fake := fixtureFolders(t, fix, dir)
	weights := filepath.Join(fix, "inception_random.pth")
	type compareOut struct {
		FID    float64
		Images struct{ Cached, Computed int }
	}
	compare := func(args ...string) compareOut {
		t.Helper()
		code, stdout, stderr := cli(t, append([]string{"compare", "--real", real, "--fake", fake, "--weights", weights, "--json"}, args...)...)
		if code != 0 {
			t.Fatalf("compare %v: exit %d: %s", args, code, stderr)
		}
		var o compareOut
		if err := json.Unmarshal([]byte(stdout), &o); err != nil {
			t.Fatal(err)
		}
		return o
	}
	first := compare("--batch", "2")
	second := compare()
	if first.Images.Computed != 6 || second.Images.Cached != 6 || second.Images.Computed != 0 || first.FID != second.FID {
		t.Errorf("first %+v, second %+v: want 6 computed, then 6 cached and the same FID", first, second)
	}

	// stats of each folder, then compare of the two statistics files:
	// the FID of the folders.
	var stats []string
	for _, in := range []string{real, fake} {
		out := filepath.Join(dir, filepath.Base(in)+".npz")
		if code, _, stderr := cli(t, "stats", "--in", in, "--out", out, "--weights", weights); code != 0 {
			t.Fatalf("stats %s: exit %d: %s", in, code, stderr)
		}
		stats = append(stats, out)
	}
	code, stdout, stderr := cli(t, "compare", "--real", stats[0], "--fake", stats[1], "--json")
	var viaStats compareOut
	if code != 0 || json.Unmarshal([]byte(stdout), &viaStats) != nil || math.Abs(viaStats.FID-first.FID) > 1e-9*first.FID {
		t.Errorf("compare of the stats files: exit %d, %s %s; want FID %v", code, stdout, stderr, first.FID)
	}

	if code, stdout, stderr := cli(t, "is", "--images", real, "--weights", weights, "--splits", "1", "--json"); code != 0 || !strings.Contains(stdout, `"computed": 3`) {
		t.Errorf("is --images: exit %d: %s %s", code, stdout, stderr)
	}
	if code, stdout, stderr := cli(t, "select", "--pools", real, fake, "--ref", real, "--weights", weights,
		"--image-batch", "2", "--steps", "3", "--batch", "1", "--trials", "1", "--algos", "fid-ucb", "--json"); code != 0 || !strings.Contains(stdout, `"best": 0`) {
		t.Errorf("select on folders: exit %d: %s %s", code, stdout, stderr)
	}
	// Weights other than the published FID file: one line in every table
	// that used them, and "official": false in --json.
	const unofficial = "are not the published FID Inception weights (pt_inception-2015-12-05-6726825d.pth): not comparable with published FIDs"
	for _, args := range [][]string{
		{"compare", "--real", real, "--fake", fake, "--weights", weights},
		{"is", "--images", real, "--weights", weights, "--splits", "1"},
		{"stats", "--in", real, "--out", filepath.Join(dir, "again.npz"), "--weights", weights},
		{"select", "--pools", real, fake, "--ref", real, "--weights", weights, "--steps", "2", "--batch", "1", "--trials", "1", "--algos", "greedy"},
		{"features", real, "--out", filepath.Join(dir, "f.npy"), "--weights", weights},
	} {
		code, stdout, stderr := cli(t, args...)
		if code != 0 || strings.Count(stdout, unofficial) != 1 || !strings.Contains(stdout, "weights: "+weights+" (sha256 3807d25d7a88…)") {
			t.Errorf("%v: exit %d, stdout %q, stderr %s; want one line saying %q", args, code, stdout, stderr, unofficial)
		}
	}
	if _, stdout, _ := cli(t, "compare", "--real", real, "--fake", fake, "--weights", weights, "--json"); !strings.Contains(stdout, `"official": false`) {
		t.Errorf("compare --json: %s lacks \"official\": false", stdout)
	}

	// An image flag with feature files only is refused.
	if code, _, stderr := cli(t, "compare", "--real", stats[0], "--fake", stats[1], "--no-cache"); code != 2 || !strings.Contains(stderr, "--no-cache applies only to folders") {
		t.Errorf("--no-cache without folders: exit %d: %s", code, stderr)
	}
}

// TestComparePyTorchFIDStatsTest is pytorch-fid's own test through the
// command line: two statistics files, mu 0 and mu 1,
// identity covariances, d = 2048; FID is exactly 2048.
func TestComparePyTorchFIDStatsTest(t *testing.T) {
	dir := t.TempDir()
	const d = 2048
	eye := mat.DenseCopyOf(func() *mat.SymDense {
		s := mat.NewSymDense(d, nil)
		for i := 0; i < d; i++ {
			s.SetSym(i, i, 1)
		}
		return s
	}()).RawMatrix().Data
	mu := func(v float64) []float64 {
		m := make([]float64, d)
		for i := range m {
			m[i] = v
		}
		return m
	}
	s1 := writeNPZ(t, dir, "s1.npz", map[string]*dataio.Array{"mu": {Shape: []int{d}, Data: mu(0)}, "sigma": {Shape: []int{d, d}, Data: eye}})
	s2 := writeNPZ(t, dir, "s2.npz", map[string]*dataio.Array{"mu": {Shape: []int{d}, Data: mu(1)}, "sigma": {Shape: []int{d, d}, Data: eye}})
	code, stdout, stderr := cli(t, "compare", "--real", s1, "--fake", s2, "--metrics", "fid", "--json")
	var out struct{ FID float64 }
	if code != 0 || json.Unmarshal([]byte(stdout), &out) != nil {
		t.Fatalf("exit %d: %s %s", code, stdout, stderr)
	}
	if math.Abs(out.FID-d) > 1e-9*d {
		t.Errorf("FID %.12g, want exactly %d", out.FID, d)
	}
}

// TestCompareFoldersUnderPTY: in a terminal, compare on folders draws a
// bar counting images with a rate, and no bar shares a line with the
// result (a bar glued to the next line).
func TestCompareFoldersUnderPTY(t *testing.T) {
	fix := shareddata.Path(t, "fixtures/inception_random")
	dir := t.TempDir()
	t.Setenv("GENLENS_CACHE", filepath.Join(dir, "cache"))
	for i, name := range []string{"img000", "img001", "img002", "img003", "img004", "img005"} {
		b, _ := os.ReadFile(filepath.Join(fix, "images", name+".png"))
		side := filepath.Join(dir, []string{"real", "fake"}[i/3])
		os.MkdirAll(side, 0o755)
		os.WriteFile(filepath.Join(side, name+".png"), b, 0o644)
	}
	// Each look at the bars' clock is 400 ms later, so that the rate shows
	// however fast the network runs.
	var ticks atomic.Int64
	start := time.Now()
	console.Clock = func() time.Time { return start.Add(time.Duration(ticks.Add(1)) * 400 * time.Millisecond) }
	t.Cleanup(func() { console.Clock = time.Now })
	var code int
	out := ptytest.Run(t, func(tty *os.File) {
		code = run([]string{"compare", "--real", filepath.Join(dir, "real"), "--fake", filepath.Join(dir, "fake"),
			"--weights", filepath.Join(fix, "inception_random.pth"), "--batch", "1"}, tty, tty)
	})
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if !strings.Contains(out, "images/s") {
		t.Errorf("no images/s on the terminal:\n%q", out)
	}
	// The result's line, "FID  0.83"; warnings and the weights line name
	// the FID in words.
	result := regexp.MustCompile(`FID\s+-?[0-9]`)
	fid := 0
	for _, l := range ptytest.Screen(out) {
		if result.MatchString(l) {
			fid++
			if !strings.HasPrefix(l, "FID") {
				t.Errorf("the FID line shares its line with a bar: %q", l)
			}
		}
	}
	if fid != 1 {
		t.Errorf("%d FID lines on the screen:\n%s", fid, out)
	}
}
