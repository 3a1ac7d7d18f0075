package golden

import "testing"

func TestJSONDiff(t *testing.T) {
	for _, c := range []struct {
		got, want string
		same      bool
	}{
		{`{"a": 0.9656290324790496}`, `{"a": 0.9656290324790497}`, true},
		{`{"a": 0.9656290324790496}`, `{"a": 0.9656290424790497}`, false},
		{`{"a": 1}`, `{"a": 2}`, false},
		{`{"a": 1, "b": 2}`, `{"b": 2, "a": 1}`, false},
		{`{"a": [1, 2]}`, `{"a": [1, 2, 3]}`, false},
		{`{"a": null}`, `{"a": 0}`, false},
		{`{"a": "x"}`, `{"a": "y"}`, false},
		{`{"a": 0}`, `{"a": 0.0}`, false},
	} {
		if d := Diff([]byte(c.got), []byte(c.want)); (d == "") != c.same {
			t.Errorf("Diff(%s, %s) = %q, want same=%v", c.got, c.want, d, c.same)
		}
	}
}
