package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// The root help lists each command once, grouped under the paper it
// implements; --version answers; a bad root flag is not prefixed twice.
func TestRootHelpVersionAndFlagError(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"--help"}, &out, &errb); code != 0 {
		t.Fatalf("--help: exit %d: %s", code, errb.String())
	}
	help := out.String()
	for _, name := range []string{"entropy", "compare", "disentangle", "hallucination", "mse", "demo"} {
		if n := strings.Count(help, "\n  "+name+" "); n != 1 {
			t.Errorf("help lists %q %d times, want once:\n%s", name, n, help)
		}
	}
	if !strings.Contains(help, "Gruber & Buettner, ICML 2024") {
		t.Errorf("help does not cite the kernel-score paper:\n%s", help)
	}
	out.Reset()
	errb.Reset()
	if code := run([]string{"--version"}, &out, &errb); code != 0 || !strings.HasPrefix(out.String(), "genlens version ") {
		t.Errorf("--version: exit %d, stdout %q", code, out.String())
	}
	out.Reset()
	errb.Reset()
	code := run([]string{"--bogus"}, &out, &errb)
	requireUsageError(t, code, errb.String(), "--bogus")
	if strings.Contains(errb.String(), "genlens: genlens:") {
		t.Errorf("stderr %q repeats the program name", errb.String())
	}
}

// A panic inside a command is an internal error (exit 1), never the exit
// code of bad input (Go's runtime would exit 2).
func TestPanicIsInternalError(t *testing.T) {
	extraCommands = append(extraCommands, extraCommand{"other", func() *cobra.Command {
		return &cobra.Command{Use: "panic-for-test", Hidden: true, RunE: func(*cobra.Command, []string) error {
			var m map[string]int
			//lint:ignore SA5000 a nil-map write: the runtime panic under test
			m["x"]++
			return nil
		}}
	}})
	defer func() { extraCommands = extraCommands[:len(extraCommands)-1] }()
	var out, errb bytes.Buffer
	if code := run([]string{"panic-for-test"}, &out, &errb); code != 1 {
		t.Fatalf("exit %d, want 1; stderr %q", code, errb.String())
	}
	if !strings.HasPrefix(errb.String(), "genlens: internal error") {
		t.Errorf("stderr %q", errb.String())
	}
}

// The promise of docs/formats.md about --json and --out, command by command.
func TestJSONAndOutFlagsAsREADME(t *testing.T) {
	noJSON := map[string]bool{"version": true, "serve-model": true, "serve": true, "demo": true, "completion": true, "help": true}
	outDir := []string{"entropy", "correlate", "select", "disentangle", "simulate", "run", "estimate", "bench", "demo"}
	noOut := []string{"decompose", "compare", "is", "cka"}
	var visit func(c *cobra.Command)
	seen := map[string]bool{}
	visit = func(c *cobra.Command) {
		if c.HasSubCommands() {
			for _, s := range c.Commands() {
				visit(s)
			}
			return
		}
		name := c.Name()
		seen[name] = true
		if has := c.Flags().Lookup("json") != nil; has == noJSON[name] && !c.Hidden {
			t.Errorf("%s: --json %v, docs/formats.md says %v", c.CommandPath(), has, !noJSON[name])
		}
		for _, n := range outDir {
			if n == name && c.Flags().Lookup("out") == nil {
				t.Errorf("%s: no --out, docs/formats.md says it writes artifacts there", c.CommandPath())
			}
		}
		for _, n := range noOut {
			if n == name && c.Flags().Lookup("out") != nil {
				t.Errorf("%s: has --out, docs/formats.md says it prints only", c.CommandPath())
			}
		}
	}
	visit(newRoot(&bytes.Buffer{}, &bytes.Buffer{}))
	for _, n := range append(outDir, noOut...) {
		if !seen[n] {
			t.Errorf("docs/formats.md names %s, which is not a command", n)
		}
	}
}

// Renamed flags: the old spelling still parses, warns once, and the
// error names the flag by its new name (the command's own spelling of
// the request field).
func TestRenamedFlagsInMessages(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"entropy", "--in", "x.jsonl", "--threshold", "1"}, []string{"--threshold is deprecated", "use --rouge-threshold", "genlens: --rouge-threshold 1"}},
		{[]string{"hallucination", "simulate", "--backend", "categorical", "--groups", "2", "--labels", "1"}, []string{"use --input-count", "use --label-count", "--label-count 1"}},
		{[]string{"disentangle", "--threshold", "-1", "--train", "a.npy", "--test", "b.npy", "--generated", "c.npy"}, []string{"use --cut-distance"}},
	} {
		var out, errb bytes.Buffer
		code := run(tc.args, &out, &errb)
		if code != 2 {
			t.Errorf("%v: exit %d, stderr %q", tc.args, code, errb.String())
		}
		for _, w := range tc.want {
			if !strings.Contains(errb.String(), w) {
				t.Errorf("%v: stderr %q lacks %q", tc.args, errb.String(), w)
			}
		}
	}
}

// `genlens version` and --version print the same text.
func TestVersionCommand(t *testing.T) {
	var v1, v2, e bytes.Buffer
	if c1, c2 := run([]string{"version"}, &v1, &e), run([]string{"--version"}, &v2, &e); c1 != 0 || c2 != 0 || v1.String() != v2.String() || !strings.Contains(v1.String(), "\ngo ") {
		t.Errorf("version: exit %d %q; --version: exit %d %q; stderr %q", c1, v1.String(), c2, v2.String(), e.String())
	}
}
