package main

import (
	"strings"
	"testing"
)

// A command run without its required inputs says where its help is, as
// every other usage error does.
func TestMissingInputsHint(t *testing.T) {
	for _, args := range [][]string{{"stats"}, {"stats", "--out", "s.npz"}} {
		code, _, stderr := cli(t, args...)
		if code != 2 || !strings.Contains(stderr, "(see 'genlens stats --help')") {
			t.Errorf("%v: exit %d, stderr %q: want exit 2 and the --help hint", args, code, stderr)
		}
	}
}
