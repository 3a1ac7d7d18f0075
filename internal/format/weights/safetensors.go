package weights

import (
	"cmp"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"sort"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/format/torchfile"
)

// maxSafetensorsHeader bounds the JSON header, as the format's own
// reader does (100 MB).
const maxSafetensorsHeader = 100 << 20

// isFloat reports whether a safetensors dtype is one of the floating-point
// types read (the 8-bit float types are not).
func isFloat(dtype string) bool {
	switch dtype {
	case "F64", "F32", "F16", "BF16":
		return true
	}
	return false
}

// stEntry is one tensor of a safetensors header.
type stEntry struct {
	DType   string   `json:"dtype"`
	Shape   []int64  `json:"shape"`
	Offsets [2]int64 `json:"data_offsets"`
}

// stElemSize is the byte width of the dtypes the format defines; the
// float ones are read, the others skipped.
var stElemSize = map[string]int64{
	"F64": 8, "F32": 4, "F16": 2, "BF16": 2,
	"I64": 8, "I32": 4, "I16": 2, "I8": 1, "U64": 8, "U32": 4, "U16": 2, "U8": 1, "BOOL": 1,
	"F8_E4M3": 1, "F8_E5M2": 1,
}

// ReadSafetensors reads the floating-point tensors of a safetensors file
// (an 8-byte little-endian header length, a JSON header naming every
// tensor's dtype, shape and byte range, then the raw little-endian data)
// as float32. Every size the header claims is checked against the file's
// length, and what the tensors take against the matrix budget, before
// anything is allocated; integer tensors (Hugging Face's position_ids)
// are checked and skipped.
func ReadSafetensors(path string) (map[string]*Tensor, error) {
	return readSafetensors(path, nil)
}

func readSafetensors(path string, keep func(string) bool) (map[string]*Tensor, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &fault.InputError{File: path, Msg: "cannot read weights", Err: err}
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, &fault.InputError{File: path, Msg: "cannot read weights", Err: err}
	}
	if !st.Mode().IsRegular() {
		return nil, &fault.InputError{File: path, Msg: "is not a regular file"}
	}
	return ParseSafetensors(path, f, st.Size(), keep)
}

// ParseSafetensors reads the safetensors file of size bytes in r (named
// path in errors) as ReadSafetensors does, keeping the tensors whose
// names keep accepts (all when keep is nil).
func ParseSafetensors(path string, r io.ReaderAt, size int64, keep func(key string) bool) (map[string]*Tensor, error) {
	bad := func(key, format string, a ...any) error {
		return &fault.InputError{File: path, Key: key, Msg: fmt.Sprintf(format, a...)}
	}
	var lenBuf [8]byte
	if size < 8 {
		return nil, bad("", "not a safetensors file: %d bytes, shorter than the 8-byte header length", size)
	}
	if _, err := r.ReadAt(lenBuf[:], 0); err != nil {
		return nil, bad("", "cannot read the header length: %v", err)
	}
	n := binary.LittleEndian.Uint64(lenBuf[:])
	if n > maxSafetensorsHeader || int64(n) > size-8 {
		return nil, bad("", "header claims %d bytes but the file has %d after the length (truncated or not safetensors)", n, size-8)
	}
	hdr := make([]byte, n)
	if _, err := r.ReadAt(hdr, 8); err != nil {
		return nil, bad("", "cannot read the header: %v", err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(hdr, &raw); err != nil {
		return nil, bad("", "header is not a JSON object: %v", err)
	}
	data := size - 8 - int64(n)
	keys := make([]string, 0, len(raw))
	for k := range raw {
		if k != "__metadata__" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	entries := make(map[string]stEntry, len(keys))
	for _, k := range keys {
		var e stEntry
		if err := json.Unmarshal(raw[k], &e); err != nil {
			return nil, bad(k, "bad header entry: %v", err)
		}
		es, ok := stElemSize[e.DType]
		if !ok {
			return nil, bad(k, "unknown dtype %q", e.DType)
		}
		count := int64(1)
		for _, d := range e.Shape {
			if d < 0 {
				return nil, bad(k, "negative dimension in shape %v", e.Shape)
			}
			if d > 0 && count > math.MaxInt64/es/d {
				return nil, bad(k, "shape %v overflows", e.Shape)
			}
			count *= d
		}
		b, en := e.Offsets[0], e.Offsets[1]
		if b < 0 || en < b || en > data {
			return nil, bad(k, "data offsets [%d, %d] outside the %d data bytes (truncated file?)", b, en, data)
		}
		if en-b != count*es {
			return nil, bad(k, "shape %v of %s needs %d bytes, offsets give %d", e.Shape, e.DType, count*es, en-b)
		}
		entries[k] = e
	}
	// The tensors' byte ranges may not overlap (the format lays them end
	// to end): a header of many entries naming one large range would
	// otherwise make a small file ask for a copy of it per entry.
	byStart := slices.SortedFunc(maps.Keys(entries), func(a, b string) int {
		return cmp.Or(cmp.Compare(entries[a].Offsets[0], entries[b].Offsets[0]), cmp.Compare(entries[a].Offsets[1], entries[b].Offsets[1]))
	})
	for i := 1; i < len(byStart); i++ {
		prev, cur := entries[byStart[i-1]], entries[byStart[i]]
		if cur.Offsets[0] < prev.Offsets[1] {
			return nil, bad(byStart[i], "data offsets [%d, %d] overlap those of %q [%d, %d]", cur.Offsets[0], cur.Offsets[1], byStart[i-1], prev.Offsets[0], prev.Offsets[1])
		}
	}
	// Price what will be copied before any of it is allocated.
	var read []string
	p := pricer{file: path}
	for _, k := range keys {
		e := entries[k]
		if !isFloat(e.DType) || (keep != nil && !keep(k)) {
			continue
		}
		shape := make([]int, len(e.Shape))
		for i, d := range e.Shape {
			shape[i] = int(d)
		}
		if err := p.add(k, shape, (e.Offsets[1]-e.Offsets[0])/stElemSize[e.DType]); err != nil {
			return nil, err
		}
		read = append(read, k)
	}
	out := make(map[string]*Tensor, len(read))
	base := 8 + int64(n)
	for _, k := range read {
		e := entries[k]
		var conv func([]byte, []float32)
		switch e.DType {
		case "F32":
			conv = func(b []byte, d []float32) {
				for i := range d {
					d[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
				}
			}
		case "F64":
			conv = func(b []byte, d []float32) {
				for i := range d {
					d[i] = float32(math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:])))
				}
			}
		case "F16":
			conv = func(b []byte, d []float32) {
				for i := range d {
					d[i] = torchfile.Float16(binary.LittleEndian.Uint16(b[2*i:]))
				}
			}
		case "BF16":
			conv = func(b []byte, d []float32) {
				for i := range d {
					d[i] = math.Float32frombits(uint32(binary.LittleEndian.Uint16(b[2*i:])) << 16)
				}
			}
		default:
			continue
		}
		es := stElemSize[e.DType]
		count := (e.Offsets[1] - e.Offsets[0]) / es
		t := &Tensor{Shape: make([]int, len(e.Shape)), Data: make([]float32, count)}
		for i, d := range e.Shape {
			t.Shape[i] = int(d)
		}
		// Read in pieces so a 1 GB tensor does not need a second 1 GB
		// byte buffer.
		const piece = 1 << 20 // elements
		buf := make([]byte, min(count, piece)*es)
		for i := int64(0); i < count; i += piece {
			m := min(piece, count-i)
			if _, err := r.ReadAt(buf[:m*es], base+e.Offsets[0]+i*es); err != nil {
				return nil, bad(k, "cannot read tensor data: %v", err)
			}
			conv(buf[:m*es], t.Data[i:i+m])
		}
		out[k] = t
	}
	return out, nil
}
