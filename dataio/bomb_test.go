package dataio

import (
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/genlens/genlens/fault"
)

// withFloor lowers the size below which any compression ratio is
// accepted, so that small test files can play decompression bombs.
func withFloor(t *testing.T, n int64) {
	old := bombFloor
	bombFloor = n
	t.Cleanup(func() { bombFloor = old })
}

func gzipped(t *testing.T, path string, data []byte) {
	t.Helper()
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	zw.Write(data)
	zw.Close()
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Compressed inputs that grow more than MaxCompressionRatio times past
// the floor are refused as bad input, from the NPY header when it declares
// the size and otherwise as the bytes come out; ordinary compressed
// files of the same content under the floor are read.
func TestDecompressionBombs(t *testing.T) {
	withFloor(t, 1<<20)
	dir := t.TempDir()
	zeros := &Array{Shape: []int{512, 512}, Data: make([]float64, 512*512)} // 2 MiB of zeros
	npz := filepath.Join(dir, "zeros.npz")
	if err := WriteNPZ(npz, map[string]*Array{"x": zeros}, true); err != nil {
		t.Fatal(err)
	}
	var npy bytes.Buffer
	if err := encodeNPY(&npy, zeros); err != nil {
		t.Fatal(err)
	}
	npyGz := filepath.Join(dir, "zeros.npy.gz")
	gzipped(t, npyGz, npy.Bytes())
	csvGz := filepath.Join(dir, "zeros.csv.gz")
	gzipped(t, csvGz, bytes.Repeat([]byte("0,0,0,0\n"), 1<<18)) // 2 MiB of text, 8 MiB of numbers
	for _, p := range []string{npz, npyGz, csvGz} {
		_, err := ReadArray(p, ReadOptions{})
		var ie *fault.InputError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), "decompression bomb") || !strings.Contains(err.Error(), "times its") {
			t.Errorf("%s: %v, want a decompression-bomb InputError", filepath.Base(p), err)
		}
	}
	// The same files are fine under the default floor.
	bombFloor = 64 << 20
	for _, p := range []string{npz, npyGz, csvGz} {
		if _, err := ReadArray(p, ReadOptions{}); err != nil {
			t.Errorf("%s under the floor: %v", filepath.Base(p), err)
		}
	}
}

// A stream that lies about nothing but simply goes on is cut at the
// limit: bombReader lets exactly the limit through and fails after it.
func TestBombReaderLimit(t *testing.T) {
	withFloor(t, 100)
	old := MaxCompressionRatio
	MaxCompressionRatio = 10
	defer func() { MaxCompressionRatio = old }()
	for _, tc := range []struct {
		n    int
		fail bool
	}{{99, false}, {100, false}, {101, true}} {
		r := newBombReader(bytes.NewReader(make([]byte, tc.n)), src{file: "f.gz"}, 5)
		var out bytes.Buffer
		_, err := out.ReadFrom(r)
		if (err != nil) != tc.fail || out.Len() > 100 {
			t.Errorf("%d bytes: read %d, error %v", tc.n, out.Len(), err)
		}
	}
}
