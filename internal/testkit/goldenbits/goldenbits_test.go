package goldenbits

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestSum(t *testing.T) {
	a := Sum([][]float32{{1, 2}, {3}})
	for _, other := range [][][]float32{
		{{1, 2, 3}},           // same values, other rows
		{{1, 2}, {3.0000002}}, // one bit
		{{1, 2}, {3}, {}},     // an empty row more
	} {
		if Sum(other) == a {
			t.Errorf("Sum(%v) equals Sum of [[1 2] [3]]", other)
		}
	}
	if Sum([][]float32{{1, 2}, {3}}) != a {
		t.Error("Sum is not deterministic")
	}
}

func TestCompare(t *testing.T) {
	base := Golden{Version: 2, Backend: "b", SHA256: strings.Repeat("a", 64)}
	moved := base
	moved.SHA256 = strings.Repeat("b", 64)
	bumped := moved
	bumped.Version = 3
	for _, tc := range []struct {
		name      string
		got       Golden
		wantEmpty bool
		wantText  string
	}{
		{"same", base, true, ""},
		{"bits moved, version kept", moved, false, "raise the version"},
		{"version raised", bumped, false, "record the new bits"},
	} {
		msg := Compare(base, tc.got)
		if (msg == "") != tc.wantEmpty || !strings.Contains(msg, tc.wantText) {
			t.Errorf("%s: Compare = %q", tc.name, msg)
		}
	}
}

func TestReadWrite(t *testing.T) {
	file := filepath.Join(t.TempDir(), "g")
	g := Golden{Version: 7, Backend: "simdblas (pure Go; float32 GEMM on avx512)", SHA256: strings.Repeat("c", 64)}
	if err := Write(file, g); err != nil {
		t.Fatal(err)
	}
	got, err := Read(file)
	if err != nil || got != g {
		t.Fatalf("Read = %+v, %v; want %+v", got, err, g)
	}
	if _, err := Read(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("Read of a missing file succeeded")
	}
}
