package dataio

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/genlens/genlens/fault"
	"gonum.org/v1/gonum/mat"
)

// Array is a dense float64 array in C (row-major) order: the element at
// index (i0, i1, ..., ik) is Data[((i0*Shape[1]+i1)*Shape[2]+...)+ik].
type Array struct {
	Shape []int
	Data  []float64
}

// Rank returns the number of axes.
func (a *Array) Rank() int { return len(a.Shape) }

// Size returns the number of elements, the product of Shape.
func (a *Array) Size() int {
	n := 1
	for _, d := range a.Shape {
		n *= d
	}
	return n
}

// check reports an Array whose Data does not match its Shape; that is a
// programming error in the caller, not bad input.
func (a *Array) check() error {
	if a == nil {
		return errors.New("dataio: nil Array")
	}
	n := 1
	for _, d := range a.Shape {
		if d < 0 {
			return fmt.Errorf("dataio: negative dimension in shape %v", a.Shape)
		}
		n *= d
	}
	if n != len(a.Data) {
		return fmt.Errorf("dataio: shape %s holds %d elements but Data has %d", fmtShape(a.Shape), n, len(a.Data))
	}
	return nil
}

// Matrix returns a rank-2 array as a *mat.Dense.
//
// The matrix shares memory with a.Data (no copy): a change to one shows in
// the other. Copy with mat.DenseCopyOf when that is not wanted. mat.Dense
// cannot be empty, so a zero-size array is an error.
func (a *Array) Matrix() (*mat.Dense, error) {
	if err := a.check(); err != nil {
		return nil, err
	}
	if len(a.Shape) != 2 {
		return nil, fmt.Errorf("dataio: want a 2-D array, got shape %s", fmtShape(a.Shape))
	}
	if a.Shape[0] == 0 || a.Shape[1] == 0 {
		return nil, fmt.Errorf("dataio: array of shape %s is empty", fmtShape(a.Shape))
	}
	return mat.NewDense(a.Shape[0], a.Shape[1], a.Data), nil
}

// Slice returns the i-th sub-array along axis 0, e.g. one (m, d) group of
// an (n, m, d) stack.
//
// The result is a view: its Data aliases a.Data, so no element is copied
// and writes show through. Like slice indexing it panics when a has rank 0
// or i is out of range, since that is a programming error.
func (a *Array) Slice(i int) *Array {
	if len(a.Shape) == 0 {
		panic("dataio: Slice of a rank-0 array")
	}
	if i < 0 || i >= a.Shape[0] {
		panic(fmt.Sprintf("dataio: Slice index %d out of range [0, %d)", i, a.Shape[0]))
	}
	sub := append([]int(nil), a.Shape[1:]...)
	stride := 1
	for _, d := range sub {
		stride *= d
	}
	return &Array{Shape: sub, Data: a.Data[i*stride : (i+1)*stride : (i+1)*stride]}
}

// ReadOptions selects what to read from a file.
type ReadOptions struct {
	// Key names the .npz member to read, with or without the ".npy"
	// suffix. "" reads the only array, and is an error listing the keys
	// when the archive holds several. Other formats hold one array, so a
	// Key given for them is an error rather than silently ignored.
	Key string
	// Ranks, when not nil, lists the array ranks the caller accepts. NPY
	// and NPZ readers check them from the header, before reading any
	// data, so that a small compressed file of the wrong shape cannot
	// make them decompress gigabytes first. ReadMatrix and ReadStack set
	// them.
	Ranks []int
	// Sep separates the fields of a CSV file (see ParseSep); 0 is the
	// comma. Other formats ignore it.
	Sep rune
}

// MaxDecodedBytes bounds the memory one array may take once decoded
// (8 bytes an element, as float64). Binary readers check it from the
// header before reading data, so a decompression bomb (a few hundred
// kilobytes of zip or gzip declaring a huge array) is refused at once.
// 4 GiB holds 250,000 x 2048 features; raise it for larger arrays.
var MaxDecodedBytes int64 = 4 << 30

// ReadArray reads a numeric array, choosing the format by extension:
// .npy, .npz or .csv (a CSV file gives a rank-2 array). A ".gz" suffix on
// .npy and .csv files is decompressed on the fly. Integer dtypes are
// converted to float64; float data must be finite. Zero-size arrays are
// rejected, since every consumer needs at least one element.
func ReadArray(path string, opt ReadOptions) (*Array, error) {
	return ReadArrayFS(HostFS, path, opt)
}

// ReadArrayFS is ReadArray on the file name in fsys.
func ReadArrayFS(fsys fs.FS, path string, opt ReadOptions) (*Array, error) {
	a, err := readArray(fsys, path, opt)
	if err != nil {
		return nil, err
	}
	if a.Size() == 0 {
		return nil, &fault.InputError{File: path, Key: opt.Key, Msg: fmt.Sprintf("array of shape %s is empty", fmtShape(a.Shape))}
	}
	return a, nil
}

func readArray(fsys fs.FS, path string, opt ReadOptions) (*Array, error) {
	ext, gz := fileExt(path)
	if opt.Key != "" && ext != ".npz" {
		return nil, &fault.InputError{File: path, Msg: fmt.Sprintf("a key (%q) was given but %s files hold a single array", opt.Key, ext)}
	}
	switch {
	case ext == ".npz" && !gz:
		return readNPZ(fsys, path, opt.Key, opt.Ranks)
	case ext == ".npy":
		return readNPYFile(fsys, path, gz, opt.Ranks)
	case ext == ".csv":
		_, a, err := readCSVFile(fsys, path, gz, opt.Sep)
		return a, err
	}
	return nil, &fault.InputError{File: path, Msg: fmt.Sprintf("unknown file type %q: want .npy, .npz or .csv", filepath.Ext(path))}
}

// ReadMatrix reads a rank-2 array (rows = samples) as a *mat.Dense.
func ReadMatrix(path string, opt ReadOptions) (*mat.Dense, error) {
	return ReadMatrixFS(HostFS, path, opt)
}

// ReadMatrixFS is ReadMatrix on the file name in fsys.
func ReadMatrixFS(fsys fs.FS, path string, opt ReadOptions) (*mat.Dense, error) {
	if opt.Ranks == nil {
		opt.Ranks = []int{2}
	}
	a, err := ReadArrayFS(fsys, path, opt)
	if err != nil {
		return nil, err
	}
	if a.Rank() != 2 {
		return nil, &fault.InputError{File: path, Key: opt.Key, Msg: fmt.Sprintf("want a 2-D array (rows = samples), got shape %s", fmtShape(a.Shape))}
	}
	return a.Matrix()
}

// ReadStack reads an (n, m, d) stack: n models or groups of m samples of
// dimension d. A rank-2 (m, d) array is accepted as a stack of one group,
// shape (1, m, d), sharing its data.
func ReadStack(path string, opt ReadOptions) (*Array, error) {
	return ReadStackFS(HostFS, path, opt)
}

// ReadStackFS is ReadStack on the file name in fsys.
func ReadStackFS(fsys fs.FS, path string, opt ReadOptions) (*Array, error) {
	if opt.Ranks == nil {
		opt.Ranks = []int{2, 3}
	}
	a, err := ReadArrayFS(fsys, path, opt)
	if err != nil {
		return nil, err
	}
	switch a.Rank() {
	case 2:
		return &Array{Shape: []int{1, a.Shape[0], a.Shape[1]}, Data: a.Data}, nil
	case 3:
		return a, nil
	}
	return nil, &fault.InputError{File: path, Key: opt.Key, Msg: fmt.Sprintf("want a 3-D (n, m, d) or 2-D (m, d) array, got shape %s", fmtShape(a.Shape))}
}

// CheckSameDim reports whether a and b have the same last-axis length
// (feature dimension), as any comparison of two sample sets needs. The
// error names both files and both dimensions.
func CheckSameDim(aPath string, a *Array, bPath string, b *Array) error {
	if a.Rank() == 0 {
		return &fault.InputError{File: aPath, Msg: "want an array with at least one axis, got a scalar"}
	}
	if b.Rank() == 0 {
		return &fault.InputError{File: bPath, Msg: "want an array with at least one axis, got a scalar"}
	}
	da, db := a.Shape[a.Rank()-1], b.Shape[b.Rank()-1]
	if da != db {
		return &fault.InputError{File: bPath, Msg: fmt.Sprintf("dimension %d (shape %s) does not match dimension %d of %s (shape %s); the last axis must match",
			db, fmtShape(b.Shape), da, aPath, fmtShape(a.Shape))}
	}
	return nil
}

// fileExt returns the lower-case extension with any ".gz" removed, and
// whether it was there.
func fileExt(path string) (ext string, gz bool) {
	p := strings.ToLower(path)
	if strings.HasSuffix(p, ".gz") {
		gz = true
		p = strings.TrimSuffix(p, ".gz")
	}
	return filepath.Ext(p), gz
}

// openErr reports a file that cannot be opened. A missing or unreadable
// file is a usage error (exit 2), so it is an *InputError that still
// unwraps to fs.ErrNotExist and friends.
func openErr(path string, err error) error {
	return &fault.InputError{File: path, Msg: "cannot open: " + Cause(err), Err: err}
}

// openInput opens path, transparently gunzipping it when gz is set. size
// is the byte count the returned reader holds, or -1 when unknown.
func openInput(fsys fs.FS, path string, gz bool) (r io.Reader, size int64, closeFn func() error, err error) {
	f, st, err := openRegular(fsys, path)
	if err != nil {
		return nil, 0, nil, err
	}
	if !gz {
		return bufio.NewReaderSize(f, 1<<16), st.Size(), f.Close, nil
	}
	zr, err := gzip.NewReader(bufio.NewReader(f))
	if err != nil {
		f.Close()
		return nil, 0, nil, &fault.InputError{File: path, Msg: "not a valid gzip file: " + err.Error()}
	}
	return newBombReader(zr, src{file: path, stream: true}, st.Size()), -1, f.Close, nil
}

func readNPYFile(fsys fs.FS, path string, gz bool, ranks []int) (*Array, error) {
	r, size, closeFn, err := openInput(fsys, path, gz)
	if err != nil {
		return nil, err
	}
	defer closeFn()
	s := src{file: path, stream: gz, ranks: ranks}
	if gz {
		s.compressed = fileSize(fsys, path)
	}
	return decodeNPY(s, r, size)
}
