package dataio_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/fault"
)

// A round trip through an .npy file, and the one-line error a user sees
// for bad input.
func Example() {
	dir, err := os.MkdirTemp("", "dataio-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)

	path := filepath.Join(dir, "features.npy")
	a := &dataio.Array{Shape: []int{2, 3}, Data: []float64{1, 2, 3, 4, 5, 6}}
	if err := dataio.WriteNPY(path, a); err != nil {
		fmt.Println(err)
		return
	}
	m, err := dataio.ReadMatrix(path, dataio.ReadOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	r, c := m.Dims()
	fmt.Println(r, c, m.At(1, 2))

	// One value is not a number: the error names the file, line and column.
	bad := filepath.Join(dir, "bad.csv")
	os.WriteFile(bad, []byte("x,y\n1,2\n3,oops\n"), 0o644)
	_, err = dataio.ReadArray(bad, dataio.ReadOptions{})
	var ie *fault.InputError
	if errors.As(err, &ie) {
		fmt.Println(filepath.Base(ie.File), ie.Line, ie.Field, ie.Msg)
	}
	// Output:
	// 2 3 6
	// bad.csv 3 column 2 "oops" is not a number
}

func ExampleInputError() {
	err := &fault.InputError{File: "answers.jsonl", Line: 17, Field: "embeddings[2][5]", Msg: "is NaN"}
	fmt.Println(err)
	// Output: dataio: answers.jsonl line 17: embeddings[2][5]: is NaN
}
