package strictjson

import (
	"bytes"
	"encoding/json"
	"testing"
)

type inner struct {
	Sep string `json:"sep"`
}

type request struct {
	inner
	Real    string `json:"real"`
	Gamma   string `json:"gamma,omitempty"`
	Skipped string `json:"-"`
	Plain   int
}

func TestUnknownField(t *testing.T) {
	for _, c := range []struct {
		body, want string
		found      bool
	}{
		{`{"real": "a", "sep": ";", "GAMMA": "1", "plain": 2}`, "", false},
		{`{"real": "a", "reals": "b"}`, "reals", true},
		{`{"real": {"x": [1, 2]}, "Skipped": "x"}`, "Skipped", true},
		{`{"real": "a", "nope": 1, "cut`, "nope", true}, // cut short after the key
		{`[1, 2]`, "", false},
	} {
		got, found := unknownField([]byte(c.body), &request{})
		if got != c.want || found != c.found {
			t.Errorf("%s: %q %v, want %q %v", c.body, got, found, c.want, c.found)
		}
	}
}

// The key unknownField finds is the one a strict decode refuses.
func TestAgreesWithDecoder(t *testing.T) {
	body := []byte(`{"real": "a", "sep": ";", "colour": "red"}`)
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&request{}); err == nil {
		t.Fatal("the decoder accepted an unknown field")
	}
	if got, _ := unknownField(body, &request{}); got != "colour" {
		t.Errorf("unknownField = %q, want colour", got)
	}
}
