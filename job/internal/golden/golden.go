// Package golden compares a result's JSON with a golden file in the
// testdata folder of the package under test, as the command line's --json
// writes it; go test -update rewrites the files.
package golden

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// Update is the -update flag of the tests that import the package.
var Update = flag.Bool("update", false, "rewrite the golden files in testdata")

// goldenRelTol is how far a number may move from its golden value. The
// contract is the shape (keys, their order, types, strings, integers);
// the last few bits of a float depend on the BLAS in use (gonum and
// OpenBLAS sum in different orders), so floats are compared to 1e-9
// relative, far below any change of formula or normaliser.
const goldenRelTol = 1e-9

// Check marshals v as the command line's --json does and compares it
// with testdata/name.json; -update rewrites the file. The golden files pin
// the JSON contracts that the README documents.
func Check(t *testing.T, name string, v any) {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", name+".json")
	if *Update {
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run %s -update to create it)", err, t.Name())
	}
	if bytes.Equal(b.Bytes(), want) {
		return
	}
	if diff := Diff(b.Bytes(), want); diff != "" {
		t.Errorf("%s: JSON differs from %s: %s\ngot:\n%s", t.Name(), path, diff, b.Bytes())
	}
}

// Diff compares two JSON documents token by token, so that key order
// counts, and returns the first difference ("" when they agree).
func Diff(got, want []byte) string {
	dg := json.NewDecoder(bytes.NewReader(got))
	dw := json.NewDecoder(bytes.NewReader(want))
	dg.UseNumber()
	dw.UseNumber()
	for i := 0; ; i++ {
		tg, eg := dg.Token()
		tw, ew := dw.Token()
		if eg != nil || ew != nil {
			if eg == ew {
				return ""
			}
			return fmt.Sprintf("token %d: got error %v, want error %v", i, eg, ew)
		}
		ng, okg := tg.(json.Number)
		nw, okw := tw.(json.Number)
		if okg && okw {
			if ng == nw {
				continue
			}
			fg, err1 := ng.Float64()
			fw, err2 := nw.Float64()
			if err1 != nil || err2 != nil || !IsFloat(ng) || !IsFloat(nw) ||
				math.Abs(fg-fw) > goldenRelTol*math.Max(math.Abs(fw), 1e-300) {
				return fmt.Sprintf("token %d: got %s, want %s", i, ng, nw)
			}
			continue
		}
		if fmt.Sprint(tg) != fmt.Sprint(tw) || fmt.Sprintf("%T", tg) != fmt.Sprintf("%T", tw) {
			return fmt.Sprintf("token %d: got %v, want %v", i, tg, tw)
		}
	}
}

// IsFloat reports whether a JSON number was written as a float (with a
// fraction or exponent): integers (counts, indices, labels) must match
// exactly.
func IsFloat(n json.Number) bool {
	return bytes.ContainsAny([]byte(n), ".eE")
}
