package checkmodel

import (
	"os"
	"path/filepath"
	"testing"
)

func TestProbe(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name                string
		path                string
		exists, model, fail bool
	}{
		{"missing", filepath.Join(dir, "none.json"), false, false, false},
		{"a model", write("m.json", `{"format":"`+FormatVersion+`","objective":"mse"}`), true, true, false},
		{"another format", write("o.json", `{"format":"genlens-checkmodel/0"}`), true, false, false},
		{"data", write("d.csv", "x,y\n1,2\n"), true, false, false},
		{"a directory", dir, true, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			exists, model, err := Probe(tc.path)
			if exists != tc.exists || model != tc.model || (err != nil) != tc.fail {
				t.Errorf("Probe = %v, %v, %v; want %v, %v, error %v", exists, model, err, tc.exists, tc.model, tc.fail)
			}
		})
	}
}
