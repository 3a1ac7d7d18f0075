package main

import (
	"bytes"
	"strings"
	"testing"
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
