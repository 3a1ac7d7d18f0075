package job

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// golden marshals v as the command line's --json does and compares it
// with testdata/name.json; -update rewrites the file. The golden files pin
// the JSON contracts that the README documents.
func golden(t *testing.T, name string, v any) {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", name+".json")
	if *update {
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./job -run %s -update to create it)", err, t.Name())
	}
	if !bytes.Equal(b.Bytes(), want) {
		t.Errorf("%s: JSON differs from %s:\ngot:\n%s\nwant:\n%s", t.Name(), path, b.Bytes(), want)
	}
}
