package commands

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/job/icljob"
)

// notSizes are the numeric fields of requests that size nothing: a seed,
// a shard index (bounded by its count), and real parameters of a method
// (a threshold, a learning rate, a prior's scale) whose large values are
// legitimate or refused by the method's own range checks. Every other
// numeric or list field of every request must have an upper bound.
var notSizes = map[string]string{
	"seed":                  "a random seed",
	"shard":                 "an index below shards, itself bounded",
	"cka.threshold":         "a multiple of the median distance, any positive value",
	"disentangle.threshold": "a distance at which to cut the tree",
	"noise":                 "the noise scale of the linear model",
	"prior_scale":           "the prior's scale of the linear model",
	"alpha":                 "the Dirichlet concentration",
	"lambda":                "the regularisation weight",
	"lr":                    "the learning rate",
	"bonus_scale":           "a multiplier of the bonus",
	"tolerance":             "how far a row may sum from 1",
	"kle_t":                 "the heat kernel's time",
}

// absurd returns a value of v's type far beyond any real use: 2^40 for
// an integer, 2^62 ns (146 years) for a duration, 1e300 for a float, and
// a list of 2^17 distinct names.
func absurd(v reflect.Value) (reflect.Value, bool) {
	t := v.Type()
	switch {
	case t == reflect.TypeOf(time.Duration(0)):
		return reflect.ValueOf(time.Duration(1 << 62)), true
	case t.Kind() == reflect.Int || t.Kind() == reflect.Int64:
		return reflect.ValueOf(int64(1) << 40).Convert(t), true
	case t.Kind() == reflect.Float64:
		return reflect.ValueOf(1e300).Convert(t), true
	case t.Kind() == reflect.Pointer:
		e, ok := absurd(reflect.New(t.Elem()).Elem())
		if !ok {
			return reflect.Value{}, false
		}
		p := reflect.New(t.Elem())
		p.Elem().Set(e)
		return p, true
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.String:
		s := make([]string, 1<<17)
		for i := range s {
			s[i] = fmt.Sprintf("f%d.npy", i)
		}
		return reflect.ValueOf(s), true
	}
	return reflect.Value{}, false
}

// leaves calls f with every field of struct v, descending into embedded
// structs, and its JSON name.
func leaves(v reflect.Value, f func(name string, fv reflect.Value)) {
	for i := 0; i < v.NumField(); i++ {
		sf := v.Type().Field(i)
		if sf.Anonymous && sf.Type.Kind() == reflect.Struct {
			leaves(v.Field(i), f)
			continue
		}
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		f(name, v.Field(i))
	}
}

// Every size-like field of every request has an upper bound in Validate:
// an absurd value (2^40 for a count) is a fault.FieldError naming the field,
// whose message says the bound ("at most ..."), so that a number in a
// request can never size an allocation that kills the process. A new
// numeric or list field fails here until it is bounded or listed in
// notSizes with a reason.
func TestEverySizeFieldIsBounded(t *testing.T) {
	for _, c := range All {
		body := minimalRequests[c.Name]
		base := c.New()
		if err := json.Unmarshal([]byte(body), base); err != nil {
			t.Fatal(err)
		}
		var names []string
		leaves(reflect.ValueOf(base).Elem(), func(name string, fv reflect.Value) { names = append(names, name) })
		for _, name := range names {
			if _, ok := notSizes[name]; ok {
				continue
			}
			if _, ok := notSizes[c.Name+"."+name]; ok {
				continue
			}
			req := c.New()
			if err := json.Unmarshal([]byte(body), req); err != nil {
				t.Fatal(err)
			}
			var set, float bool
			leaves(reflect.ValueOf(req).Elem(), func(n string, fv reflect.Value) {
				if n != name {
					return
				}
				if a, ok := absurd(fv); ok {
					fv.Set(a)
					set = true
					float = reflect.Indirect(a).Kind() == reflect.Float64
				}
			})
			if !set {
				continue // a string or a flag
			}
			err := req.Validate()
			var fe *fault.FieldError
			switch {
			case err == nil:
				t.Errorf("%s: {%s} absurdly large: accepted", c.Name, name)
			case !errors.As(err, &fe) || fe.Field != name:
				t.Errorf("%s: {%s} absurdly large: refused, but not as a fault.FieldError of %s: %#v", c.Name, name, name, err)
			case !statesBound(err.Error(), float):
				t.Errorf("%s: {%s} absurdly large: message does not state the bound: %v", c.Name, name, err)
			}
		}
	}
}

// statesBound reports whether a message refusing a large value says what
// is allowed: "at most N", or for a real number its interval.
func statesBound(msg string, float bool) bool {
	if strings.Contains(msg, "at most") {
		return true
	}
	return float && (strings.Contains(msg, " up to ") || strings.Contains(msg, " in (") || strings.Contains(msg, " in ["))
}

// Sizes written inside strings are bounded too: the count of context
// sizes and of named inputs and labels.
func TestSizesInStringsAreBounded(t *testing.T) {
	many := func(n int) string {
		s := make([]string, n)
		for i := range s {
			s[i] = fmt.Sprint(i)
		}
		return strings.Join(s, ",")
	}
	for _, tc := range []struct {
		cmd, field string
	}{
		{"hallucination simulate", "ns"},
		{"hallucination run", "inputs"},
		{"hallucination run", "labels"},
	} {
		c := Named(strings.ReplaceAll(tc.cmd, " ", "-"))
		req := c.New()
		if err := json.Unmarshal([]byte(minimalRequests[tc.cmd]), req); err != nil {
			t.Fatal(err)
		}
		switch r := req.(type) {
		case *icljob.HallucinationSimulateRequest:
			r.Ns, r.Tasks = many(20_000), 1
		case *icljob.HallucinationRunRequest:
			r.Backend = "categorical"
			if tc.field == "inputs" {
				r.Inputs = many(1 << 17)
			} else {
				r.Labels = many(1 << 17)
			}
		}
		err := req.Validate()
		var fe *fault.FieldError
		if !errors.As(err, &fe) || fe.Field != tc.field || !strings.Contains(err.Error(), "at most") {
			t.Errorf("%s: {%s} with too many entries: %v", tc.cmd, tc.field, err)
		}
	}
}
