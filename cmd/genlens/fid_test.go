package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/genlens/genlens/internal/testkit/shareddata"
)

// pytorch-fid's command line runs as genlens fid: the flags of
// `python -m pytorch_fid`, the "FID:  x" line alone on stdout, and
// --save-stats writing the first path's statistics to the second, from
// which the FID is the same.
func TestFIDAsPytorchFID(t *testing.T) {
	fix := shareddata.Path(t, "fixtures/inception_random")
	t.Setenv("GENLENS_CACHE", t.TempDir())
	dir := t.TempDir()
	real, fake := fixtureFolders(t, fix, dir)
	weights := filepath.Join(fix, "inception_random.pth")
	line := regexp.MustCompile(`^FID:  [0-9]+\.[0-9]+(e-[0-9]+)?\n$`)
	code, direct, stderr := cli(t, "fid", real+"/", fake+"/", "--batch-size", "50", "--device", "cpu", "--dims", "2048", "--num-workers", "2", "--weights", weights)
	if code != 0 || !line.MatchString(direct) {
		t.Fatalf("fid: exit %d, stdout %q, want one line FID:  x; stderr %s", code, direct, stderr)
	}
	st := filepath.Join(dir, "real_stats") // ".npz" added, as NumPy's savez does
	if code, _, stderr := cli(t, "fid", "--save-stats", real, st, "--weights", weights); code != 0 {
		t.Fatalf("fid --save-stats: exit %d: %s", code, stderr)
	}
	code, viaStats, stderr := cli(t, "fid", st+".npz", fake, "--weights", weights)
	if code != 0 || viaStats != direct {
		t.Errorf("fid from the saved statistics: exit %d, %q, want %q; stderr %s", code, viaStats, direct, stderr)
	}
	// Two statistics files, as pytorch-fid takes them: --batch-size (50
	// unless given) is the image options' default, not a flag given to
	// files that are no folders.
	fst := filepath.Join(dir, "fake_stats.npz")
	if code, _, stderr := cli(t, "fid", "--save-stats", fake, fst, "--weights", weights); code != 0 {
		t.Fatalf("fid --save-stats: exit %d: %s", code, stderr)
	}
	if code, both, stderr := cli(t, "fid", st+".npz", fst); code != 0 || both != direct {
		t.Errorf("fid from two statistics files: exit %d, %q, want %q; stderr %s", code, both, direct, stderr)
	}
	if code, _, stderr := cli(t, "fid", "--save-stats", real, st+".npz", "--weights", weights); code != 2 || !strings.Contains(stderr, "existing output file") {
		t.Errorf("fid --save-stats over an existing file: exit %d, %s", code, stderr)
	}
	code, small, stderr := cli(t, "fid", real, fake, "--dims", "64", "--weights", weights)
	if code != 0 || !line.MatchString(small) || small == direct {
		t.Errorf("fid --dims 64: exit %d, %q (pool3: %q): %s", code, small, direct, stderr)
	}
}

// What pytorch-fid accepts and genlens cannot do is refused with what it
// does instead; bad values name the flag.
func TestFIDRefusals(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"fid", "a/", "b/", "--device", "cuda"}, []string{"--device cuda", "CPU only", "CPU-seconds an image"}},
		{[]string{"fid", "a/", "b/", "--device", "cuda:0"}, []string{"--device cuda:0", "CPU only"}},
		{[]string{"fid", "a/", "b/", "--dims", "100"}, []string{"--dims 100", "64, 192, 768, 2048"}},
		{[]string{"fid", "a/"}, []string{"want two paths"}},
		{[]string{"fid", "a/", "b/", "--batch-size", "0"}, []string{"--batch-size 0"}},
		{[]string{"fid", "--save-stats", filepath.Join(t.TempDir(), "none"), "out.npz"}, []string{"invalid path"}},
	} {
		code, _, stderr := cli(t, tc.args...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2: %s", tc.args, code, stderr)
		}
		for _, w := range tc.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%v: stderr %q lacks %q", tc.args, stderr, w)
			}
		}
	}
}

// An unknown flag is answered with the command's own flags it is close
// to, and pytorch-fid's flags typed to another command point to fid.
func TestUnknownFlagSuggestions(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		want    []string
		notWant string
	}{
		{[]string{"fid", "a/", "b/", "--batch-siz", "3"}, []string{"unknown flag: --batch-siz", "did you mean --batch-size?"}, ""},
		{[]string{"compare", "a/", "b/", "--batch-size", "3"}, []string{"did you mean --batch?", "'genlens fid' takes pytorch-fid's flags"}, ""},
		{[]string{"compare", "a/", "b/", "--device", "cpu"}, []string{"unknown flag: --device", "'genlens fid'"}, "did you mean"},
		{[]string{"stats", "--workrs", "2"}, []string{"did you mean --workers?"}, ""},
		{[]string{"mse", "fit", "--tarrget", "y"}, []string{"did you mean --target?"}, ""},
		{[]string{"entropy", "--matrix-budget", "5"}, []string{"did you mean --matrix-budget-mb?"}, ""},
		{[]string{"stats", "--zzzzzzzz"}, []string{"unknown flag: --zzzzzzzz"}, "did you mean"},
	} {
		code, _, stderr := cli(t, tc.args...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2: %s", tc.args, code, stderr)
		}
		for _, w := range tc.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%v: stderr %q lacks %q", tc.args, stderr, w)
			}
		}
		if tc.notWant != "" && strings.Contains(stderr, tc.notWant) {
			t.Errorf("%v: stderr %q has %q", tc.args, stderr, tc.notWant)
		}
	}
}

func TestPyFloat(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		want string
	}{{2.600610, "2.60061"}, {0, "0.0"}, {12, "12.0"}, {0.830609514591806, "0.830609514591806"}, {1e-05, "1e-05"}, {1.5e16, "1.5e+16"}, {123456.7, "123456.7"}} {
		if got := pyFloat(tc.v); got != tc.want {
			t.Errorf("pyFloat(%v) = %q, want %q (Python's repr)", tc.v, got, tc.want)
		}
	}
}

// --save-stats refuses a device or a folder as the statistics to write,
// before any image is read: /dev/null became /dev/null.npz.
func TestFIDSaveStatsRefusesNonRegular(t *testing.T) {
	in := t.TempDir()
	for _, out := range []string{os.DevNull, t.TempDir()} {
		code, _, stderr := cli(t, "fid", "--save-stats", in, out)
		if code != 2 || !strings.Contains(stderr, "not a regular file") {
			t.Errorf("--save-stats %s: exit %d, %s", out, code, stderr)
		}
		if _, err := os.Stat(out + ".npz"); err == nil {
			os.Remove(out + ".npz")
			t.Errorf("--save-stats %s wrote %s.npz", out, out)
		}
	}
}
