package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteReplacesAndKeepsMode(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "x.txt")
	if err := os.WriteFile(p, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Write(p, func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err }); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	st, _ := os.Stat(p)
	if string(b) != "new" || st.Mode().Perm() != 0o600 {
		t.Errorf("content %q mode %v", b, st.Mode().Perm())
	}
}

func TestFailedWriteLeavesFileAndNoTemp(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "x.txt")
	if err := os.WriteFile(p, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := Write(p, func(w io.Writer) error { io.WriteString(w, "partial"); return boom })
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	b, _ := os.ReadFile(p)
	entries, _ := os.ReadDir(dir)
	if string(b) != "keep" || len(entries) != 1 {
		t.Errorf("content %q, %d entries", b, len(entries))
	}
	if err := Write(filepath.Join(dir, "new.txt"), func(w io.Writer) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(filepath.Join(dir, "new.txt")); st.Mode().Perm() != 0o666&^umask() {
		t.Errorf("new file mode %v", st.Mode().Perm())
	}
}

// A new file's permissions follow the umask, as os.Create's do: a user
// with umask 077 keeps outputs (check models embed training errors)
// private.
func TestNewFileFollowsUmask(t *testing.T) {
	dir := t.TempDir()
	ref := filepath.Join(dir, "by-os-create")
	f, err := os.Create(ref)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	want, _ := os.Stat(ref)
	p := filepath.Join(dir, "by-atomicfile")
	if err := Write(p, func(w io.Writer) error { return nil }); err != nil {
		t.Fatal(err)
	}
	got, _ := os.Stat(p)
	if got.Mode().Perm() != want.Mode().Perm() {
		t.Errorf("new file mode %v, os.Create gives %v (umask %03o)", got.Mode().Perm(), want.Mode().Perm(), umask())
	}
}
