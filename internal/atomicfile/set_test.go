package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeString(s string) func(io.Writer) error {
	return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
}

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// A Set's files appear together or not at all: a failing writer leaves
// the earlier run's files as they were and no temporary files; Commit
// replaces them all; RemoveTemps clears what an interrupted Set holds.
func TestSetAllOrNothing(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.csv"), filepath.Join(dir, "b.png")
	if err := WriteAll([]string{a, b}, []func(io.Writer) error{writeString("old a"), writeString("old b")}); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("disk full")
	err := WriteAll([]string{a, b}, []func(io.Writer) error{writeString("new a"), func(io.Writer) error { return boom }})
	if !errors.Is(err, boom) {
		t.Fatalf("err %v", err)
	}
	for p, want := range map[string]string{a: "old a", b: "old b"} {
		if got, _ := os.ReadFile(p); string(got) != want {
			t.Errorf("%s = %q after a failed run, want %q (a mixed set)", filepath.Base(p), got, want)
		}
	}
	if names := listDir(t, dir); len(names) != 2 {
		t.Errorf("files left: %v", names)
	}

	var s Set
	if err := s.Add(a, writeString("new a")); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(a); string(got) != "old a" {
		t.Error("Add replaced the file before Commit")
	}
	if err := s.Add(b, writeString("new b")); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{a: "new a", b: "new b"} {
		if got, _ := os.ReadFile(p); string(got) != want {
			t.Errorf("%s = %q after Commit, want %q", filepath.Base(p), got, want)
		}
	}

	// Interrupted between Add and Commit: RemoveTemps leaves only the
	// committed files.
	var s2 Set
	if err := s2.Add(a, writeString("third")); err != nil {
		t.Fatal(err)
	}
	if names := listDir(t, dir); len(names) != 3 {
		t.Fatalf("want a temporary file beside a.csv and b.png, got %v", names)
	}
	RemoveTemps()
	for _, n := range listDir(t, dir) {
		if strings.HasPrefix(n, ".") {
			t.Errorf("temporary file %s left after RemoveTemps", n)
		}
	}
	if got, _ := os.ReadFile(a); string(got) != "new a" {
		t.Errorf("a.csv = %q", got)
	}
	// A new file of a Set follows the umask, as Write's do.
	c := filepath.Join(dir, "c.json")
	if err := WriteAll([]string{c}, []func(io.Writer) error{writeString("{}")}); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(c); st.Mode().Perm() != 0o666&^umask() {
		t.Errorf("mode %v, umask %03o", st.Mode().Perm(), umask())
	}
}
