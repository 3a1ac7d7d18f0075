package dataio

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/genlens/genlens/fault"
)

// wantInputError fails unless err is an *InputError whose message
// contains every want string.
func wantInputError(t *testing.T, err error, want ...string) *fault.InputError {
	t.Helper()
	var ie *fault.InputError
	if !errors.As(err, &ie) {
		t.Fatalf("want *InputError, got %T: %v", err, err)
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") {
		t.Errorf("message spans lines: %q", msg)
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("message %q does not contain %q", msg, w)
		}
	}
	return ie
}

func writeFile(t *testing.T, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestInputErrorFormat(t *testing.T) {
	tests := []struct {
		e    fault.InputError
		want string
	}{
		{fault.InputError{File: "answers.jsonl", Line: 17, Field: "embeddings[2][5]", Msg: "is NaN"},
			"dataio: answers.jsonl line 17: embeddings[2][5]: is NaN"},
		{fault.InputError{File: "x.npy", Line: 4, Field: "column 7", Msg: "is +Inf"},
			"dataio: x.npy row 4, column 7: is +Inf"},
		{fault.InputError{File: "x.npy", Msg: "want a 2-D array, got shape (3, 4, 5)"},
			"dataio: x.npy: want a 2-D array, got shape (3, 4, 5)"},
		{fault.InputError{File: "a.csv", Line: 3, Field: "column 2", Msg: `"abc" is not a number`},
			`dataio: a.csv line 3, column 2: "abc" is not a number`},
		{fault.InputError{File: "s.npz", Key: "mu", Line: 2, Msg: "is NaN"},
			`dataio: s.npz key "mu" row 2: is NaN`},
		{fault.InputError{File: "r.parquet", Line: 9, Field: "samples", Msg: "missing"},
			"dataio: r.parquet row 9: samples: missing"},
		{fault.InputError{File: "x.csv", Field: "column 1", Msg: "two\nlines"},
			`dataio: x.csv: column 1: two\nlines`},
	}
	for _, tt := range tests {
		if got := tt.e.Error(); got != tt.want {
			t.Errorf("got  %q\nwant %q", got, tt.want)
		}
	}
}

func TestArrayMethods(t *testing.T) {
	a := &Array{Shape: []int{2, 3, 2}, Data: []float64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}}
	if a.Rank() != 3 || a.Size() != 12 {
		t.Fatalf("Rank, Size = %d, %d", a.Rank(), a.Size())
	}
	s := a.Slice(1)
	if !reflect.DeepEqual(s.Shape, []int{3, 2}) || !reflect.DeepEqual(s.Data, []float64{6, 7, 8, 9, 10, 11}) {
		t.Fatalf("Slice(1) = %+v", s)
	}
	s.Data[0] = -1 // a view: writes show through
	if a.Data[6] != -1 {
		t.Error("Slice is not a view")
	}
	if _, err := a.Matrix(); err == nil {
		t.Error("Matrix of rank 3 should fail")
	}
	m, err := s.Matrix()
	if err != nil {
		t.Fatal(err)
	}
	if r, c := m.Dims(); r != 3 || c != 2 || m.At(2, 1) != 11 {
		t.Errorf("Matrix dims %d x %d, At(2,1) = %v", r, c, m.At(2, 1))
	}
	m.Set(0, 1, 42) // shares memory
	if a.Data[7] != 42 {
		t.Error("Matrix does not share memory")
	}
	if _, err := (&Array{Shape: []int{0, 3}}).Matrix(); err == nil {
		t.Error("Matrix of an empty array should fail")
	}
	if _, err := (&Array{Shape: []int{2, 2}, Data: []float64{1}}).Matrix(); err == nil {
		t.Error("Matrix of an inconsistent array should fail")
	}
	for _, i := range []int{-1, 2} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Slice(%d) did not panic", i)
				}
			}()
			a.Slice(i)
		}()
	}
}

func TestReadArrayFiles(t *testing.T) {
	dir := t.TempDir()
	le := binary.LittleEndian
	m23 := writeFile(t, dir, "m.npy", npyBytes(1, hdr("<f4", false, "(2, 3)"), f32s(le, 1, 2, 3, 4, 5, 6)))
	s3 := writeFile(t, dir, "s.npy", npyBytes(1, hdr("|u1", false, "(2, 1, 2)"), []byte{1, 2, 3, 4}))
	v4 := writeFile(t, dir, "v.npy", npyBytes(1, hdr("<f8", false, "(4,)"), f64s(le, 1, 2, 3, 4)))
	empty := writeFile(t, dir, "e.npy", npyBytes(1, hdr("<f8", false, "(0, 3)"), nil))
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(npyBytes(1, hdr("<f8", true, "(2, 2)"), f64s(le, 1, 3, 2, 4)))
	zw.Close()
	gzPath := writeFile(t, dir, "g.NPY.gz", gz.Bytes())
	badGz := writeFile(t, dir, "b.npy.gz", gz.Bytes()[:gz.Len()-6])
	txt := writeFile(t, dir, "x.txt", []byte("1,2\n"))
	dirNPY := filepath.Join(dir, "d.npy")
	if err := os.Mkdir(dirNPY, 0o755); err != nil {
		t.Fatal(err)
	}

	m, err := ReadMatrix(m23, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r, c := m.Dims(); r != 2 || c != 3 || m.At(1, 0) != 4 {
		t.Errorf("ReadMatrix: %d x %d, At(1,0) = %v", r, c, m.At(1, 0))
	}
	st, err := ReadStack(m23, ReadOptions{})
	if err != nil || !reflect.DeepEqual(st.Shape, []int{1, 2, 3}) {
		t.Errorf("ReadStack of rank 2: %v, %v", st, err)
	}
	st, err = ReadStack(s3, ReadOptions{})
	if err != nil || !reflect.DeepEqual(st.Shape, []int{2, 1, 2}) || !reflect.DeepEqual(st.Data, []float64{1, 2, 3, 4}) {
		t.Errorf("ReadStack of rank 3: %v, %v", st, err)
	}
	a, err := ReadArray(gzPath, ReadOptions{})
	if err != nil || !reflect.DeepEqual(a.Data, []float64{1, 2, 3, 4}) {
		t.Errorf("gzip Fortran: %v, %v", a, err)
	}

	tests := []struct {
		name string
		err  error
		want []string
	}{
		{"matrix of rank 3", func() error { _, err := ReadMatrix(s3, ReadOptions{}); return err }(),
			[]string{"s.npy: want a 2-D array", "got shape (2, 1, 2)"}},
		{"matrix of rank 1", func() error { _, err := ReadMatrix(v4, ReadOptions{}); return err }(),
			[]string{"v.npy", "shape (4,)"}},
		{"stack of rank 1", func() error { _, err := ReadStack(v4, ReadOptions{}); return err }(),
			[]string{"v.npy", "3-D", "(4,)"}},
		{"empty", func() error { _, err := ReadArray(empty, ReadOptions{}); return err }(),
			[]string{"e.npy", "empty", "(0, 3)"}},
		{"key on npy", func() error { _, err := ReadArray(m23, ReadOptions{Key: "a"}); return err }(),
			[]string{"m.npy", "key"}},
		{"extension", func() error { _, err := ReadArray(txt, ReadOptions{}); return err }(),
			[]string{"x.txt", "unknown file type"}},
		{"missing", func() error { _, err := ReadArray(filepath.Join(dir, "nope.npy"), ReadOptions{}); return err }(),
			[]string{"nope.npy", "cannot open"}},
		{"directory", func() error { _, err := ReadArray(dirNPY, ReadOptions{}); return err }(),
			[]string{"d.npy", "is a directory"}},
		{"truncated gzip", func() error { _, err := ReadArray(badGz, ReadOptions{}); return err }(),
			[]string{"b.npy.gz"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { wantInputError(t, tt.err, tt.want...) })
	}
	_, err = ReadArray(filepath.Join(dir, "nope.npy"), ReadOptions{})
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file error %v does not unwrap to fs.ErrNotExist", err)
	}
}

func TestCheckSameDim(t *testing.T) {
	a := &Array{Shape: []int{10, 2048}, Data: make([]float64, 10*2048)}
	b := &Array{Shape: []int{3, 5, 2048}, Data: make([]float64, 3*5*2048)}
	c := &Array{Shape: []int{5, 64}, Data: make([]float64, 5*64)}
	if err := CheckSameDim("a.npy", a, "b.npy", b); err != nil {
		t.Errorf("same dim: %v", err)
	}
	err := CheckSameDim("a.npy", a, "c.npy", c)
	wantInputError(t, err, "a.npy", "c.npy", "2048", "64", "(5, 64)", "(10, 2048)")
	err = CheckSameDim("a.npy", a, "s.npy", &Array{Shape: []int{}, Data: []float64{1}})
	wantInputError(t, err, "s.npy", "scalar")
}

func TestWriteAtomic(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.csv")
	if err := WriteCSV(p, []string{"a", "b"}, [][]float64{{1, 2}}); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(p)
	// A failing write (ragged rows) must leave the old file and no
	// temporary file behind.
	if err := WriteCSV(p, []string{"a", "b"}, [][]float64{{1, 2}, {3}}); err == nil {
		t.Fatal("ragged rows should fail")
	}
	after, _ := os.ReadFile(p)
	if !bytes.Equal(before, after) {
		t.Error("failed write changed the existing file")
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("directory holds %d entries, want 1 (temporary file left?)", len(ents))
	}
	if err := WriteNPY(filepath.Join(dir, "no", "such", "dir.npy"), &Array{Shape: []int{1}, Data: []float64{1}}); err == nil {
		t.Error("write into a missing directory should fail")
	}
	if err := WriteNPY(filepath.Join(dir, "bad.npy"), &Array{Shape: []int{2}, Data: []float64{1}}); err == nil {
		t.Error("inconsistent Array should fail")
	}
}

func TestWriteJSON(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "r.json")
	if err := WriteJSON(p, map[string]any{"b": 1, "a": []int{1, 2}}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	want := "{\n  \"a\": [\n    1,\n    2\n  ],\n  \"b\": 1\n}\n"
	if string(b) != want {
		t.Errorf("got %q, want %q", b, want)
	}
	if err := WriteJSON(p, map[string]float64{"x": func() float64 { var z float64; return 0 / z }()}); err == nil {
		t.Error("NaN should fail")
	}
}
