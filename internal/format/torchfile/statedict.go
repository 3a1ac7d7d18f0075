package torchfile

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/tensor/membudget"

	"github.com/nlpodyssey/gopickle/pytorch"
	"github.com/nlpodyssey/gopickle/types"
)

// Tensor is one entry of a PyTorch state dict (or one parameter or buffer
// of a TorchScript module), copied out of its storage
// into row-major order (strides and storage offset applied). Values are
// float64 whatever the stored dtype, which holds float16, float32, float64
// and the small integers of a state dict exactly.
type Tensor struct {
	Shape []int
	DType string // "float16", "bfloat16", "float32", "float64", "int64", ...
	Data  []float64
}

// pickle protocol 2 opens every legacy (pre-1.6) torch.save file; a zip
// local-file header opens the newer format.
var (
	legacyMagic = []byte{0x80, 0x02}
	zipMagic    = []byte("PK\x03\x04")
)

// LoadStateDict reads a state dict saved by torch.save, in the legacy or
// the zip serialisation (loadLegacyPickle, loadZipPickle). Every problem
// with the file is a one-line *fault.InputError naming it: not a .pth
// file, a TorchScript archive (torch.jit.save; it holds code, not a plain
// state dict), a truncated file, an entry that is not a tensor, a size
// the file claims but does not hold.
func LoadStateDict(path string) (map[string]*Tensor, error) {
	views, err := OpenStateDict(path)
	if err != nil {
		return nil, err
	}
	return float64s(path, views)
}

// OpenStateDict reads a state dict as LoadStateDict does, but copies no
// tensor out of its storages: each View says what it holds and costs, and
// copies itself out (Float32, Float64) when asked, so that a caller can
// price the copies and make only those it needs. The storages are read;
// what they take is priced against the matrix budget (membudget) before
// each is allocated.
func OpenStateDict(path string) (sd map[string]*View, err error) {
	bad := func(msg string, cause error) error {
		return &fault.InputError{File: path, Msg: msg, Err: cause}
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, bad("cannot read weights: "+dataio.Cause(err), err)
	}
	if !st.Mode().IsRegular() {
		return nil, bad("is not a regular file ("+st.Mode().Type().String()+")", nil)
	}
	head := make([]byte, 4)
	if f, err := os.Open(path); err != nil {
		return nil, bad("cannot read weights: "+dataio.Cause(err), err)
	} else {
		n, _ := io.ReadFull(f, head)
		f.Close()
		head = head[:n]
	}
	switch {
	case bytes.HasPrefix(head, zipMagic):
		if err := checkZip(path, st.Size()); err != nil {
			return nil, err
		}
	case bytes.HasPrefix(head, legacyMagic):
		// A legacy file starts with the pickle protocol opcode (not the
		// ancient tar format, which is not read).
	default:
		return nil, bad("not a PyTorch .pth file (neither the zip nor the legacy pickle serialisation)", nil)
	}

	// gopickle's unpickler panics on some malformed input (opcodes on
	// an empty stack); a corrupt weights file is bad input, not a crash.
	defer func() {
		if r := recover(); r != nil {
			sd, err = nil, bad(fmt.Sprintf("corrupt PyTorch file: %v", r), nil)
		}
	}()
	var obj any
	b := &budget{file: path}
	if bytes.HasPrefix(head, zipMagic) {
		obj, err = loadZipPickle(path, st.Size(), b)
	} else {
		obj, err = loadLegacyPickle(path, st.Size(), b)
	}
	if b.err != nil {
		return nil, b.err
	}
	if err != nil {
		msg := err.Error()
		if strings.Contains(msg, "EOF") {
			return nil, bad("truncated PyTorch file ("+msg+"); download it again", err)
		}
		return nil, bad("cannot decode PyTorch file: "+msg, err)
	}
	return stateDict(path, obj)
}

// checkZip refuses TorchScript archives with a message that says what
// they are (gopickle's own message does not name the file) and catches a
// cut-off zip before gopickle tries to read it.
func checkZip(path string, size int64) error {
	f, err := os.Open(path)
	if err != nil {
		return &fault.InputError{File: path, Msg: "cannot read weights: " + dataio.Cause(err), Err: err}
	}
	defer f.Close()
	zr, err := zip.NewReader(f, size)
	if err != nil {
		return &fault.InputError{File: path, Msg: "truncated or corrupt PyTorch zip file: " + err.Error(), Err: err}
	}
	for _, zf := range zr.File {
		base := zf.Name[strings.LastIndex(zf.Name, "/")+1:]
		if base == "constants.pkl" || strings.Contains(zf.Name, "/code/") {
			return &fault.InputError{File: path, Msg: "is a TorchScript archive (torch.jit.save), not a state dict; save model.state_dict() with torch.save instead"}
		}
	}
	return nil
}

// stateDict converts the unpickled object into tensors. torch.save of a
// state dict gives an OrderedDict; a plain dict is accepted too.
func stateDict(path string, obj any) (map[string]*View, error) {
	entries := map[string]any{}
	switch d := obj.(type) {
	case *types.OrderedDict:
		for k, e := range d.Map {
			ks, ok := k.(string)
			if !ok {
				return nil, &fault.InputError{File: path, Msg: fmt.Sprintf("state dict key %v is not a string", k)}
			}
			entries[ks] = e.Value
		}
	case *types.Dict:
		for _, e := range *d {
			ks, ok := e.Key.(string)
			if !ok {
				return nil, &fault.InputError{File: path, Msg: fmt.Sprintf("state dict key %v is not a string", e.Key)}
			}
			entries[ks] = e.Value
		}
	default:
		return nil, &fault.InputError{File: path, Msg: fmt.Sprintf("holds a %T, not a state dict (a dict of tensors)", obj)}
	}
	tensors := map[string]*pytorch.Tensor{}
	for k := range entries {
		if t, ok := entries[k].(*pytorch.Tensor); ok {
			tensors[k] = t
		}
		// Non-tensor entries (metadata) are not weights; skip them.
	}
	return openViews(path, tensors)
}

// maxReads bounds the elements the tensors of a file may copy out of
// their storages, as a multiple of the elements the storages hold:
// tensors that share a storage (tied weights, the query, key and value
// views of one projection) read it a few times at most, while a pickle
// of many small references to one large storage would ask for a copy of
// it for each (a megabyte file, for terabytes).
const maxReads = 4

// checkReads refuses tensors whose elements add up to more than maxReads
// times their storages' elements (plus a little for scalars).
func checkReads(path string, keys []string, raw map[string]*pytorch.Tensor) error {
	seen := map[pytorch.StorageInterface]bool{}
	var stored, read float64
	for _, k := range keys {
		t := raw[k]
		if !seen[t.Source] {
			seen[t.Source] = true
			stored += float64(storageLen(t.Source))
		}
		e := 1.0
		for _, d := range t.Size {
			e *= float64(max(d, 0))
		}
		read += e
	}
	if read > maxReads*stored+1024 {
		return &fault.InputError{File: path, Msg: fmt.Sprintf("its tensors hold %.0f elements, more than %d times the %.0f of their storages (corrupt file?)", read, maxReads, stored)}
	}
	return nil
}

// storageLen returns the number of elements a storage holds.
func storageLen(s pytorch.StorageInterface) int {
	switch s := s.(type) {
	case *pytorch.FloatStorage:
		return len(s.Data)
	case *pytorch.DoubleStorage:
		return len(s.Data)
	case *pytorch.HalfStorage:
		return len(s.Data)
	case *pytorch.BFloat16Storage:
		return len(s.Data)
	case *pytorch.LongStorage:
		return len(s.Data)
	case *pytorch.IntStorage:
		return len(s.Data)
	case *pytorch.ShortStorage:
		return len(s.Data)
	case *pytorch.CharStorage:
		return len(s.Data)
	case *pytorch.ByteStorage:
		return len(s.Data)
	case *pytorch.BoolStorage:
		return len(s.Data)
	}
	return 0
}

// View is a tensor of a state dict (or a parameter of a TorchScript
// module) still inside its storage, checked to lie inside it: its shape,
// the storage's dtype, and what copying it out takes.
type View struct {
	Shape []int
	DType string // "float16", "bfloat16", "float32", "float64", "int64", ...
	t     *pytorch.Tensor
	get   func(i int) float64
	n     int // elements
}

// Len returns the number of elements of the tensor.
func (v *View) Len() int { return v.n }

// IsFloat reports whether the storage holds floating-point numbers (a
// weight; integer tensors are buffers such as position ids).
func (v *View) IsFloat() bool {
	switch v.DType {
	case "float16", "bfloat16", "float32", "float64":
		return true
	}
	return false
}

// Float64 copies the tensor out in row-major order as float64, exact for
// every dtype read.
func (v *View) Float64() []float64 {
	out := make([]float64, v.n)
	v.each(func(i, off int) { out[i] = v.get(off) })
	return out
}

// Float32 returns the tensor in row-major order as float32: exact for
// float16, bfloat16 and float32, rounded for float64 and large integers.
// When InPlace, it is the storage's own memory (shared with the views of
// that storage that also are), else a copy.
func (v *View) Float32() []float32 {
	if v.InPlace() {
		o := v.t.StorageOffset
		return float32Data(v.t.Source)[o : o+v.n : o+v.n]
	}
	out := make([]float32, v.n)
	v.each(func(i, off int) { out[i] = float32(v.get(off)) })
	return out
}

// InPlace reports whether Float32 returns the storage's memory rather
// than a copy: a storage held as float32 (float32, and float16 and
// bfloat16, converted when read) read in row-major order.
func (v *View) InPlace() bool {
	return float32Data(v.t.Source) != nil && v.contiguous()
}

// float32Data returns the elements of a storage held as float32, nil for
// the others.
func float32Data(s pytorch.StorageInterface) []float32 {
	switch s := s.(type) {
	case *pytorch.FloatStorage:
		return s.Data
	case *pytorch.HalfStorage:
		return s.Data
	case *pytorch.BFloat16Storage:
		return s.Data
	}
	return nil
}

// contiguous reports whether the view is its storage's elements in
// row-major order from its offset.
func (v *View) contiguous() bool {
	step := 1
	for a := len(v.Shape) - 1; a >= 0; a-- {
		if v.Shape[a] != 1 && v.t.Stride[a] != step {
			return false
		}
		step *= v.Shape[a]
	}
	return true
}

// each calls f with each element's row-major index and storage offset,
// walking the strides from the storage offset, so views (a slice with an
// offset, a transpose) come out as the values torch would print.
func (v *View) each(f func(i, off int)) {
	t := v.t
	idx := make([]int, len(t.Size))
	for flat := 0; flat < v.n; flat++ {
		off := t.StorageOffset
		for a, i := range idx {
			off += i * t.Stride[a]
		}
		f(flat, off)
		for a := len(idx) - 1; a >= 0; a-- {
			idx[a]++
			if idx[a] < t.Size[a] {
				break
			}
			idx[a] = 0
		}
	}
}

// newView checks that the tensor's view lies inside its storage and
// returns it, nothing copied.
func newView(t *pytorch.Tensor) (*View, error) {
	var (
		get   func(i int) float64
		n     int
		dtype string
	)
	switch s := t.Source.(type) {
	case *pytorch.FloatStorage:
		get, n, dtype = func(i int) float64 { return float64(s.Data[i]) }, len(s.Data), "float32"
	case *pytorch.DoubleStorage:
		get, n, dtype = func(i int) float64 { return s.Data[i] }, len(s.Data), "float64"
	case *pytorch.HalfStorage:
		get, n, dtype = func(i int) float64 { return float64(s.Data[i]) }, len(s.Data), "float16"
	case *pytorch.BFloat16Storage:
		get, n, dtype = func(i int) float64 { return float64(s.Data[i]) }, len(s.Data), "bfloat16"
	case *pytorch.LongStorage:
		get, n, dtype = func(i int) float64 { return float64(s.Data[i]) }, len(s.Data), "int64"
	case *pytorch.IntStorage:
		get, n, dtype = func(i int) float64 { return float64(s.Data[i]) }, len(s.Data), "int32"
	case *pytorch.ShortStorage:
		get, n, dtype = func(i int) float64 { return float64(s.Data[i]) }, len(s.Data), "int16"
	case *pytorch.CharStorage:
		get, n, dtype = func(i int) float64 { return float64(s.Data[i]) }, len(s.Data), "int8"
	case *pytorch.ByteStorage:
		get, n, dtype = func(i int) float64 { return float64(s.Data[i]) }, len(s.Data), "uint8"
	default:
		return nil, fmt.Errorf("unsupported storage type %T", t.Source)
	}
	if len(t.Stride) != len(t.Size) {
		return nil, fmt.Errorf("tensor has %d sizes but %d strides", len(t.Size), len(t.Stride))
	}
	// Every count is checked before anything is allocated: a shape of
	// (2^20, 2^20) asks for 8 TiB, and (2^32, 2^32) overflows an int to
	// an empty tensor. A view (strides and offset) must lie inside its
	// storage, and a tensor may not hold more elements than its storage
	// (a broadcast view, stride 0, is not a weight).
	size := 1
	for _, d := range t.Size {
		if d < 0 {
			return nil, fmt.Errorf("negative dimension in shape %v", t.Size)
		}
		if d > 0 && size > math.MaxInt/d {
			return nil, fmt.Errorf("shape %v overflows", t.Size)
		}
		size *= d
	}
	if size > n {
		return nil, fmt.Errorf("shape %v holds %d elements, more than its storage of %d (truncated file?)", t.Size, size, n)
	}
	v := &View{Shape: append([]int(nil), t.Size...), DType: dtype, t: t, get: get, n: size}
	if size == 0 {
		return v, nil
	}
	// The largest storage index the view touches must exist.
	if t.StorageOffset < 0 || t.StorageOffset >= n {
		return nil, fmt.Errorf("storage offset %d outside its storage of %d elements", t.StorageOffset, n)
	}
	last := t.StorageOffset
	for i, d := range t.Size {
		if t.Stride[i] < 0 {
			return nil, fmt.Errorf("negative stride %v", t.Stride)
		}
		if t.Stride[i] > 0 && d-1 > (math.MaxInt-last)/t.Stride[i] {
			return nil, fmt.Errorf("view of shape %v, strides %v overflows", t.Size, t.Stride)
		}
		last += (d - 1) * t.Stride[i]
	}
	if last >= n {
		return nil, fmt.Errorf("view of shape %v, strides %v, offset %d reaches past its storage of %d elements (truncated file?)", t.Size, t.Stride, t.StorageOffset, n)
	}
	return v, nil
}

// openViews checks the tensors of a state dict or a TorchScript module
// tree, keyed by name: together they read their storages a few times at
// most (checkReads), and every view lies inside its storage (newView).
func openViews(path string, raw map[string]*pytorch.Tensor) (map[string]*View, error) {
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if err := checkReads(path, keys, raw); err != nil {
		return nil, err
	}
	out := make(map[string]*View, len(raw))
	for _, k := range keys {
		v, err := newView(raw[k])
		if err != nil {
			return nil, &fault.InputError{File: path, Key: k, Msg: err.Error()}
		}
		out[k] = v
	}
	return out, nil
}

// float64s copies every view of the file at path out as float64,
// dropping each view's entry as it goes, once the copies and the file's
// bytes (which hold the storages) are priced against the matrix budget:
// views of one storage may ask for several copies of it, each 8 bytes an
// element whatever the storage's dtype.
func float64s(path string, views map[string]*View) (map[string]*Tensor, error) {
	keys := make([]string, 0, len(views))
	for k := range views {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var used int64
	if st, err := os.Stat(path); err == nil {
		used = st.Size()
	}
	limit := membudget.Limit()
	for _, k := range keys {
		used += 8 * int64(views[k].Len())
		if used > limit {
			return nil, membudget.CheckBytes(fmt.Sprintf("the weights %s up to tensor %s", path, k), 1, views[k].Len(), used)
		}
	}
	out := make(map[string]*Tensor, len(views))
	for _, k := range keys {
		v := views[k]
		out[k] = &Tensor{Shape: v.Shape, DType: v.DType, Data: v.Float64()}
		delete(views, k)
	}
	return out, nil
}
