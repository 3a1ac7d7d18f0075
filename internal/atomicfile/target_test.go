package atomicfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSameAs(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.npy")
	if err := os.WriteFile(a, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.npy")
	if err := os.Symlink(a, link); err != nil {
		t.Skip(err)
	}
	other := filepath.Join(dir, "b.npy")
	if err := os.WriteFile(other, []byte("y"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path   string
		inputs []string
		want   string
	}{
		{a, []string{other, link}, link},
		{filepath.Join(dir, ".", "a.npy"), []string{"", a}, a},
		{a, []string{other}, ""},
		{filepath.Join(dir, "missing"), []string{a}, ""},
		{a, []string{filepath.Join(dir, "missing")}, ""},
	} {
		if got := SameAs(tc.path, tc.inputs...); got != tc.want {
			t.Errorf("SameAs(%s, %v) = %q, want %q", tc.path, tc.inputs, got, tc.want)
		}
	}
}

func TestCheckTarget(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, want string }{
		{filepath.Join(dir, "new.json"), ""},
		{file, ""},
		{dir, "is a directory"},
		{filepath.Join(dir, "no", "x.json"), "does not exist"},
		{filepath.Join(file, "x.json"), "is not a directory"},
	} {
		err := CheckTarget(tc.path)
		if (tc.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("CheckTarget(%s) = %v, want %q", tc.path, err, tc.want)
		}
	}
}
