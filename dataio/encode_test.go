package dataio

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/genlens/genlens/fault"
)

// The writer entry points write what the path ones write, and the reader
// ones read it back.
func TestEncodeDecode(t *testing.T) {
	dir := t.TempDir()
	a := &Array{Shape: []int{2, 3}, Data: []float64{1, -2.5, 3, 0.1, 1e-300, 6}}

	var npy bytes.Buffer
	if err := EncodeNPY(&npy, a); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "a.npy")
	if err := WriteNPY(p, a); err != nil {
		t.Fatal(err)
	}
	if file, _ := os.ReadFile(p); !bytes.Equal(file, npy.Bytes()) {
		t.Error("EncodeNPY and WriteNPY differ")
	}
	got, err := DecodeNPY(bytes.NewReader(npy.Bytes()), "body")
	if err != nil || !slices.Equal(got.Shape, a.Shape) || !slices.Equal(got.Data, a.Data) {
		t.Errorf("DecodeNPY: %v, %v", got, err)
	}

	var csv bytes.Buffer
	if err := EncodeCSV(&csv, []string{"x", "y", "z"}, [][]float64{{1, 2, 3}, {0.1, 0.2, 0.3}}); err != nil {
		t.Fatal(err)
	}
	if want := "x,y,z\n1,2,3\n0.1,0.2,0.3\n"; csv.String() != want {
		t.Errorf("EncodeCSV wrote %q, want %q", csv.String(), want)
	}
	h, b, err := DecodeCSV(strings.NewReader(csv.String()), "body")
	if err != nil || !slices.Equal(h, []string{"x", "y", "z"}) || !slices.Equal(b.Data, []float64{1, 2, 3, 0.1, 0.2, 0.3}) {
		t.Errorf("DecodeCSV: %v %v, %v", h, b, err)
	}

	var npz bytes.Buffer
	arrays := map[string]*Array{"a": a, "b": {Shape: []int{1}, Data: []float64{7}}}
	if err := EncodeNPZ(&npz, arrays, true); err != nil {
		t.Fatal(err)
	}
	pz := filepath.Join(dir, "a.npz")
	if err := WriteNPZ(pz, arrays, true); err != nil {
		t.Fatal(err)
	}
	if file, _ := os.ReadFile(pz); !bytes.Equal(file, npz.Bytes()) {
		t.Error("EncodeNPZ and WriteNPZ differ")
	}
}

// The decoders name the input in their errors, and EncodeNPY checks the
// array as WriteNPY does.
func TestDecodeErrors(t *testing.T) {
	_, err := DecodeNPY(strings.NewReader("not an npy"), "upload 7")
	var ie *fault.InputError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "upload 7") {
		t.Errorf("DecodeNPY of garbage: %v", err)
	}
	_, _, err = DecodeCSV(strings.NewReader("1,2\n3\n"), "body.csv")
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "body.csv") {
		t.Errorf("DecodeCSV of a ragged table: %v", err)
	}
	if err := EncodeNPY(&bytes.Buffer{}, &Array{Shape: []int{2}, Data: []float64{1}}); err == nil {
		t.Error("EncodeNPY of a shape that does not match its data: no error")
	}
}
