package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/genlens/genlens/fault"
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

// renamed decodes itself, with a key its struct does not name.
type renamed struct{ N int }

func (r *renamed) UnmarshalJSON(b []byte) error {
	var v struct {
		N int `json:"n_renamed"`
	}
	err := Unmarshal(b, &v)
	r.N = v.N
	return err
}

// A type that decodes itself reports its own unknown fields: its keys
// are not its struct's, and unknownField does not guess.
func TestUnknownFieldOfUnmarshaler(t *testing.T) {
	if got, found := unknownField([]byte(`{"n_renamed": 1}`), &renamed{}); found {
		t.Errorf("unknownField = %q of an Unmarshaler", got)
	}
	for body, field := range map[string]string{`{"n_renamed": "x"}`: "n_renamed", `{"n_renamed": 1, "m": 2}`: "m"} {
		var fe *fault.FieldError
		if err := Unmarshal([]byte(body), &renamed{}); !errors.As(err, &fe) || fe.Field != field {
			t.Errorf("%s: error %v: want a field error of %s", body, err, field)
		}
	}
}
