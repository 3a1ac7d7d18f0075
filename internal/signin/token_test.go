package signin

import (
	"strings"
	"testing"
)

func TestCheckToken(t *testing.T) {
	for _, c := range []struct {
		tok string
		ok  bool
	}{
		{"", false},
		{" ", false},
		{strings.Repeat("a", MinTokenLen-1), false},
		{strings.Repeat("a", MinTokenLen-1) + " \t\n", false}, // spaces do not count
		{strings.Repeat("a", MinTokenLen), true},
		{strings.Repeat("é", MinTokenLen), true}, // characters, not bytes
		{strings.Repeat("é", MinTokenLen/2), false},
	} {
		err := CheckToken(c.tok)
		if (err == nil) != c.ok {
			t.Errorf("CheckToken(%q) = %v, want ok %v", c.tok, err, c.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "want at least 16") {
			t.Errorf("CheckToken(%q) = %q, want it to name the minimum", c.tok, err)
		}
	}
}
