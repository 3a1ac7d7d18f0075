package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/genlens/genlens/internal/testkit/shareddata"
)

// The anchors' words: torch-fidelity's flags typed to compare are
// answered with genlens's spelling, and its fidelity command points to
// compare; clean-fid's mode names are accepted and a mode's typo gets a
// suggestion. (LM-Polygraph's score names: TestEntropyScoresFlagErrors.)
func TestOtherToolsWords(t *testing.T) {
	dir := t.TempDir()
	real, fake := filepath.Join(dir, "real"), filepath.Join(dir, "fake")
	os.Mkdir(real, 0o755)
	os.Mkdir(fake, 0o755)
	translation := "its 'fidelity --input1 GEN --input2 REF --fid --kid --prc' is 'genlens compare --fake GEN --real REF --metrics fid,kid,prdc --mode tf'"
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"compare", "--input1", fake, "--input2", real, "--fid", "--kid"}, []string{"unknown flag: --input1", "torch-fidelity's --input1 is --fake here", translation}},
		{[]string{"compare", "--fake", fake, "--input2", real}, []string{"torch-fidelity's --input2 is --real here"}},
		{[]string{"compare", real, fake, "--fid"}, []string{"torch-fidelity's --fid is --metrics fid here", translation}},
		{[]string{"compare", real, fake, "--kid"}, []string{"--metrics kid here"}},
		{[]string{"compare", real, fake, "--prc"}, []string{"--metrics prdc here"}},
		{[]string{"compare", real, fake, "--isc"}, []string{"torch-fidelity's --isc is the command 'genlens is DIR' here"}},
		{[]string{"compare", real, fake, "--gpu", "0"}, []string{"torch-fidelity's --gpu has no counterpart: genlens runs on the CPU only"}},
		{[]string{"compare", real, fake, "--prc-neighborhood", "3"}, []string{"is --nearest-k here"}},
		{[]string{"compare", real, fake, "--samples-find-deep"}, []string{"is --recursive here"}},
		{[]string{"compare", real, fake, "--rng-seed", "1"}, []string{"is --seed here"}},
		{[]string{"compare", real, fake, "--feature-extractor-weights-path", "w.pth"}, []string{"is --weights here"}},
		{[]string{"fidelity", "--input1", fake, "--input2", real, "--fid"}, []string{`unknown command "fidelity" for "genlens"; did you mean "compare"?`}},
		{[]string{"compare", real, fake, "--mode", "clen"}, []string{`--mode "clen": did you mean clean?`}},
		{[]string{"compare", real, fake, "--mode", "legacy_pytroch"}, []string{"did you mean legacy_pytorch?", "clean-fid's legacy_pytorch is pytorch-fid"}},
		{[]string{"compare", real, fake, "--kid-subset-siz", "3"}, []string{"did you mean --kid-subset-size?"}},
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
	// torch-fidelity's metric names, and typos, in --metrics.
	rows := writeFile(t, dir, "rows.csv", "1,2\n2,1\n3,3\n0,1\n")
	for m, want := range map[string]string{
		"fid,isc": `unknown metric "isc"; the Inception Score is its own command, genlens is`,
		"prc":     `unknown metric "prc"; did you mean prdc`,
		"fdi":     `unknown metric "fdi"; did you mean fid?`,
		"vendy":   `did you mean vendi?`,
	} {
		code, _, stderr := cli(t, "compare", rows, rows, "--metrics", m)
		if code != 2 || !strings.Contains(stderr, want) {
			t.Errorf("--metrics %s: exit %d, %q; want 2 and %q", m, code, stderr, want)
		}
	}
	if _, _, stderr := cli(t, "compare", real, fake, "--gpu", "0"); strings.Contains(stderr, "did you mean") {
		t.Errorf("--gpu: %q suggests a flag; none is close", stderr)
	}
}

// clean-fid's mode names are the pipelines it documents as equal:
// legacy_tensorflow gives tf's FID (from the feature cache tf filled, so
// the features are the same ones) and records mode tf.
func TestCleanFIDModeNames(t *testing.T) {
	fix := shareddata.Path(t, "fixtures/inception_random")
	t.Setenv("GENLENS_CACHE", t.TempDir())
	dir := t.TempDir()
	real, fake := fixtureFolders(t, fix, dir)
	weights := filepath.Join(fix, "inception_random.pth")
	type result struct {
		FID    float64 `json:"fid"`
		Images struct {
			Mode   string `json:"mode"`
			Cached int    `json:"cached"`
		} `json:"images"`
	}
	get := func(mode string) result {
		code, stdout, stderr := cli(t, "compare", real, fake, "--mode", mode, "--dims", "64", "--weights", weights, "--json")
		if code != 0 {
			t.Fatalf("--mode %s: exit %d: %s", mode, code, stderr)
		}
		var r result
		if err := json.Unmarshal([]byte(stdout), &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	tf := get("tf")
	legacy := get("legacy_tensorflow")
	if legacy.FID != tf.FID || legacy.Images.Mode != "tf" || legacy.Images.Cached != 6 {
		t.Errorf("--mode legacy_tensorflow: FID %v, mode %q, %d cached; want tf's FID %v, mode tf, 6 from tf's cache", legacy.FID, legacy.Images.Mode, legacy.Images.Cached, tf.FID)
	}
	if py := get("legacy_pytorch"); py.Images.Mode != "pytorch-fid" || py.FID == tf.FID {
		t.Errorf("--mode legacy_pytorch: mode %q, FID %v (tf's %v); want pytorch-fid's pipeline", py.Images.Mode, py.FID, tf.FID)
	}
}
