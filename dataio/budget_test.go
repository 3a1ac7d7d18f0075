package dataio

import (
	"bytes"
	"errors"
	"testing"
	"testing/fstest"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/tensor/membudget"
)

// A declared shape is priced against the memory budget before its bytes
// are decoded, in an .npy and in a compressed .npz member (whose small
// size says nothing of what it declares).
func TestDeclaredShapeOverBudget(t *testing.T) {
	defer membudget.SetLimit(membudget.SetLimit(1 << 19))
	a := &Array{Shape: []int{256, 256}, Data: make([]float64, 256*256)} // 512 KiB + 512 KiB as float64
	var npy, npz bytes.Buffer
	if err := EncodeNPY(&npy, a); err != nil {
		t.Fatal(err)
	}
	if err := EncodeNPZ(&npz, map[string]*Array{"sigma": a}, true); err != nil {
		t.Fatal(err)
	}
	fsys := fstest.MapFS{"a.npy": {Data: npy.Bytes()}, "a.npz": {Data: npz.Bytes()}}
	for _, tc := range []struct{ file, key string }{{"a.npy", ""}, {"a.npz", "sigma"}} {
		_, err := ReadArrayFS(fsys, tc.file, ReadOptions{Key: tc.key})
		var be *membudget.Error
		var ie *fault.InputError
		if !errors.As(err, &be) || !errors.As(err, &ie) || ie.File != tc.file {
			t.Errorf("%s: %v, want an input error naming the file and wrapping a budget error", tc.file, err)
		}
	}
	membudget.SetLimit(4 << 20)
	if _, err := ReadArrayFS(fsys, "a.npz", ReadOptions{Key: "sigma"}); err != nil {
		t.Errorf("within the budget: %v", err)
	}
}
