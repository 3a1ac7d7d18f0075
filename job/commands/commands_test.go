package commands

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/genlens/genlens/job"
)

// minimalRequests are the smallest valid bodies of every command: its
// required fields alone, over the defaults of New.
var minimalRequests = map[string]string{
	"sample":                 `{"prompts":"p.jsonl","base_url":"http://127.0.0.1:8000/v1","model":"m"}`,
	"embed":                  `{"in":"t.txt","embedder":"bge-small-en-v1.5","weights":"bge"}`,
	"entropy":                `{"in":"a.jsonl"}`,
	"decompose":              `{"models":["m1.npy","m2.npy"]}`,
	"correlate":              `{"files":["e1.npy","e2.npy"]}`,
	"features":               `{"input":"imgs"}`,
	"stats":                  `{"in":"f.npy"}`,
	"stats merge":            `{"parts":["p0.npz","p1.npz"]}`,
	"compare":                `{"real":"r.npy","fake":"f.npy"}`,
	"is":                     `{"probs":"p.npy"}`,
	"cka":                    `{"x":"x.csv","y":"y.csv"}`,
	"select":                 `{"pools":["g0.npy","g1.npy"],"ref":"r.npy"}`,
	"disentangle":            `{"train":"t.npy","test":"s.npy","generated":["g.npy"]}`,
	"hallucination run":      `{"context":"c.jsonl","queries":"q.jsonl","base_url":"http://127.0.0.1:8000/v1","model":"m"}`,
	"hallucination simulate": `{}`,
	"mse fit":                `{"train":"ref.csv","target":"y","prediction":"pred","model":"m.json"}`,
	"mse estimate":           `{"model":"m.json","data":"op.csv"}`,
	"mse bench":              `{"dataset":"synthetic-a"}`,
}

// Every command's defaults, given its required fields, are valid; its
// zero value with the same fields either is valid too or is refused with
// a message saying which default to use.
func TestCommandDefaultsAndZeroRequests(t *testing.T) {
	var names []string
	for _, c := range All {
		names = append(names, c.Name)
		body, ok := minimalRequests[c.Name]
		if !ok {
			t.Errorf("%s: no minimal request in the test", c.Name)
			continue
		}
		req := c.New()
		if err := json.Unmarshal([]byte(body), req); err != nil {
			t.Fatal(err)
		}
		if err := req.Validate(); err != nil {
			t.Errorf("%s: defaults with %s: %v", c.Name, body, err)
		}
		zero := reflect.New(reflect.TypeOf(req).Elem()).Interface().(job.Request)
		if err := json.Unmarshal([]byte(body), zero); err != nil {
			t.Fatal(err)
		}
		if err := zero.Validate(); err != nil {
			t.Logf("%s: zero request: %v", c.Name, err)
			if !strings.Contains(err.Error(), "(the default is ") {
				t.Errorf("%s: zero request with %s refused without naming the default: %v", c.Name, body, err)
			}
		}
	}
	for name := range minimalRequests {
		if !slices.Contains(names, name) {
			t.Errorf("minimalRequests has %q, not in All", name)
		}
	}
}

// The table's names are unique, and a slug names one command.
func TestCommandNames(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range All {
		if seen[c.Slug()] {
			t.Errorf("%s: twice in All", c.Name)
		}
		seen[c.Slug()] = true
		if got := Named(c.Slug()); got == nil || got.Name != c.Name {
			t.Errorf("Named(%q) = %v", c.Slug(), got)
		}
		if c.Group == "" {
			t.Errorf("%s: no group", c.Name)
		}
	}
}
