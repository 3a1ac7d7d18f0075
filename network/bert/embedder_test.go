package bert

import "testing"

func TestPrefixFor(t *testing.T) {
	e5, _ := Lookup("e5-small-v2")
	minilm, _ := Lookup("all-minilm-l6-v2")
	for _, c := range []struct {
		spec   Spec
		choice string
		want   string
		ok     bool
	}{
		{e5, "", "query: ", true},
		{e5, "query", "query: ", true},
		{e5, "passage", "passage: ", true},
		{e5, "none", "", true},
		{minilm, "passage", "", true},
		{e5, "document", "", false},
	} {
		if got, ok := c.spec.PrefixFor(c.choice); got != c.want || ok != c.ok {
			t.Errorf("%s.PrefixFor(%q) = %q, %v; want %q, %v", c.spec.Name, c.choice, got, ok, c.want, c.ok)
		}
	}
}
