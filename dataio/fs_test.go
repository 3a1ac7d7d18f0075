package dataio

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"testing/fstest"

	"github.com/genlens/genlens/fault"
)

// The ...FS readers read from any fs.FS, including one whose files have no
// ReadAt (zip needs random access, so such files are buffered).
func TestReadersOnFS(t *testing.T) {
	a := &Array{Shape: []int{2, 3}, Data: []float64{1, 2, 3, 4, 5, 6}}
	var npy, npz bytes.Buffer
	if err := encodeNPY(&npy, a); err != nil {
		t.Fatal(err)
	}
	if err := encodeNPZ(&npz, map[string]*Array{"x": a}, true); err != nil {
		t.Fatal(err)
	}
	fsys := fstest.MapFS{
		"d/a.npy":   {Data: npy.Bytes()},
		"d/a.npz":   {Data: npz.Bytes()},
		"d/a.csv":   {Data: []byte("1,2,3\n4,5,6\n")},
		"r.jsonl":   {Data: []byte(`{"id":"q1","samples":["a","b"]}` + "\n")},
		"t.csv":     {Data: []byte("x,y\n1,a\n")},
		"dir/x.npy": {Data: npy.Bytes()},
	}
	for _, name := range []string{"d/a.npy", "d/a.npz", "d/a.csv"} {
		got, err := ReadArrayFS(fsys, name, ReadOptions{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got.Shape[0] != 2 || got.Shape[1] != 3 || got.Data[5] != 6 {
			t.Errorf("%s: got shape %v data %v", name, got.Shape, got.Data)
		}
	}
	if keys, err := NPZKeysFS(fsys, "d/a.npz"); err != nil || len(keys) != 1 || keys[0] != "x" {
		t.Errorf("NPZKeysFS = %v, %v", keys, err)
	}
	if recs, err := ReadRecordsFS(fsys, "r.jsonl"); err != nil || len(recs) != 1 {
		t.Errorf("ReadRecordsFS = %v, %v", recs, err)
	}
	if tab, err := ReadTableFS(fsys, "t.csv", HeaderPresent); err != nil || tab.Rows() != 1 {
		t.Errorf("ReadTableFS = %v, %v", tab, err)
	}
	var ie *fault.InputError
	if _, err := ReadArrayFS(fsys, "dir", ReadOptions{}); !errors.As(err, &ie) {
		t.Errorf("directory: got %v, want an *InputError", err)
	}
	if _, err := ReadArrayFS(fsys, "missing.npy", ReadOptions{}); !errors.As(err, &ie) {
		t.Errorf("missing file: got %v, want an *InputError", err)
	}
}

// A named pipe among the inputs must be refused, not block the reader
// until some writer appears.
func TestNamedPipeRefused(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.npy")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skipf("cannot make a FIFO here: %v", err)
	}
	_, err := ReadArray(p, ReadOptions{})
	var ie *fault.InputError
	if !errors.As(err, &ie) {
		t.Fatalf("got %v, want an *InputError", err)
	}
	t.Log(err)
	if _, err := os.Stat(p); err != nil {
		t.Fatal(err)
	}
}
