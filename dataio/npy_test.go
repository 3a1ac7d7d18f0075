package dataio

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/genlens/genlens/fault"
)

// npyBytes builds an NPY file by hand: magic, version, header length,
// the dict literal padded with spaces to a 64-byte boundary and a newline,
// then the raw data. It is deliberately independent of encodeNPY.
func npyBytes(major byte, dict string, data []byte) []byte {
	var b bytes.Buffer
	b.WriteString("\x93NUMPY")
	b.WriteByte(major)
	b.WriteByte(0)
	pre := 10
	if major >= 2 {
		pre = 12
	}
	hl := len(dict) + 1
	pad := (64 - (pre+hl)%64) % 64
	hl += pad
	if major == 1 {
		binary.Write(&b, binary.LittleEndian, uint16(hl))
	} else {
		binary.Write(&b, binary.LittleEndian, uint32(hl))
	}
	b.WriteString(dict)
	b.WriteString(strings.Repeat(" ", pad))
	b.WriteByte('\n')
	b.Write(data)
	return b.Bytes()
}

func hdr(descr string, fortran bool, shape string) string {
	f := "False"
	if fortran {
		f = "True"
	}
	return "{'descr': '" + descr + "', 'fortran_order': " + f + ", 'shape': " + shape + ", }"
}

func f64s(o binary.AppendByteOrder, v ...float64) []byte {
	var b []byte
	for _, x := range v {
		b = o.AppendUint64(b, math.Float64bits(x))
	}
	return b
}

func f32s(o binary.AppendByteOrder, v ...float32) []byte {
	var b []byte
	for _, x := range v {
		b = o.AppendUint32(b, math.Float32bits(x))
	}
	return b
}

func i32s(o binary.AppendByteOrder, v ...int32) []byte {
	var b []byte
	for _, x := range v {
		b = o.AppendUint32(b, uint32(x))
	}
	return b
}

// fortran234 returns the (2, 3, 4) array a[i,j,k] = 100i + 10j + k in
// Fortran order (first index fastest) and in C order (last index fastest).
func fortran234() (f, c []float64) {
	for k := 0; k < 4; k++ {
		for j := 0; j < 3; j++ {
			for i := 0; i < 2; i++ {
				f = append(f, float64(100*i+10*j+k))
			}
		}
	}
	for i := 0; i < 2; i++ {
		for j := 0; j < 3; j++ {
			for k := 0; k < 4; k++ {
				c = append(c, float64(100*i+10*j+k))
			}
		}
	}
	return f, c
}

func decodeBytes(name string, b []byte) (*Array, error) {
	return decodeNPY(src{file: name}, bytes.NewReader(b), int64(len(b)))
}

func TestDecodeNPYHandBuilt(t *testing.T) {
	le, be := binary.LittleEndian, binary.BigEndian
	f3, c3 := fortran234()
	var f3i []int32
	for _, v := range f3 {
		f3i = append(f3i, int32(v))
	}
	tests := []struct {
		name  string
		file  []byte
		shape []int
		data  []float64
	}{
		{"float32 LE", npyBytes(1, hdr("<f4", false, "(2, 2)"), f32s(le, 1.5, -2, 0.25, 3e38)),
			[]int{2, 2}, []float64{1.5, -2, 0.25, float64(float32(3e38))}},
		{"float32 BE", npyBytes(1, hdr(">f4", false, "(3,)"), f32s(be, 1, 2, 3)),
			[]int{3}, []float64{1, 2, 3}},
		{"float64 BE", npyBytes(1, hdr(">f8", false, "(3,)"), f64s(be, math.Pi, -1e300, 5e-324)),
			[]int{3}, []float64{math.Pi, -1e300, 5e-324}},
		{"float64 LE scalar", npyBytes(1, hdr("<f8", false, "()"), f64s(le, 42)),
			[]int{}, []float64{42}},
		{"float16", npyBytes(1, hdr("<f2", false, "(4,)"), []byte{0x00, 0x3c, 0x00, 0xc0, 0x00, 0x38, 0x01, 0x00}),
			[]int{4}, []float64{1, -2, 0.5, math.Ldexp(1, -24)}},
		// Stored column by column: 1 4 | 2 5 | 3 6 is [[1 2 3] [4 5 6]].
		{"Fortran rank 2", npyBytes(1, hdr("<f8", true, "(2, 3)"), f64s(le, 1, 4, 2, 5, 3, 6)),
			[]int{2, 3}, []float64{1, 2, 3, 4, 5, 6}},
		{"Fortran rank 3 f8", npyBytes(1, hdr("<f8", true, "(2, 3, 4)"), f64s(le, f3...)),
			[]int{2, 3, 4}, c3},
		{"Fortran rank 3 >i4", npyBytes(1, hdr(">i4", true, "(2, 3, 4)"), i32s(be, f3i...)),
			[]int{2, 3, 4}, c3},
		{"Fortran rank 1 is C", npyBytes(1, hdr("<f8", true, "(3,)"), f64s(le, 1, 2, 3)),
			[]int{3}, []float64{1, 2, 3}},
		{"uint8 image", npyBytes(1, hdr("|u1", false, "(2, 2)"), []byte{0, 255, 128, 7}),
			[]int{2, 2}, []float64{0, 255, 128, 7}},
		{"int8", npyBytes(1, hdr("|i1", false, "(2,)"), []byte{0xff, 0x80}),
			[]int{2}, []float64{-1, -128}},
		{"int32 LE", npyBytes(1, hdr("<i4", false, "(2,)"), i32s(le, -5, 1<<30)),
			[]int{2}, []float64{-5, 1 << 30}},
		{"int64 LE", npyBytes(1, hdr("<i8", false, "(1,)"), le.AppendUint64(nil, uint64(1<<62|1))),
			[]int{1}, []float64{float64(int64(1<<62 | 1))}},
		{"uint16 BE", npyBytes(1, hdr(">u2", false, "(1,)"), []byte{0xff, 0xfe}),
			[]int{1}, []float64{65534}},
		{"version 2.0", npyBytes(2, hdr("<f8", false, "(1, 2)"), f64s(le, 7, 8)),
			[]int{1, 2}, []float64{7, 8}},
		{"version 3.0", npyBytes(3, hdr("<f8", false, "(1,)"), f64s(le, 9)),
			[]int{1}, []float64{9}},
		{"key order and Python 2 longs", npyBytes(1, "{'shape': (2L, 1L), 'fortran_order': False, 'descr': '<f8'}", f64s(le, 1, 2)),
			[]int{2, 1}, []float64{1, 2}},
		{"zero size", npyBytes(1, hdr("<f8", false, "(0, 5)"), nil),
			[]int{0, 5}, []float64{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := decodeBytes("x.npy", tt.file)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(a.Shape, tt.shape) {
				t.Errorf("shape = %v, want %v", a.Shape, tt.shape)
			}
			if !reflect.DeepEqual(a.Data, tt.data) {
				t.Errorf("data = %v, want %v", a.Data, tt.data)
			}
		})
	}
}

// TestDecodeNPYLiteral checks a file spelled out byte by byte, so the test
// helper itself cannot hide a layout mistake.
func TestDecodeNPYLiteral(t *testing.T) {
	dict := "{'descr': '>f8', 'fortran_order': False, 'shape': (2,), }"
	file := "\x93NUMPY\x01\x00" + "\x76\x00" + dict + strings.Repeat(" ", 118-len(dict)-1) + "\n" +
		"\x3f\xf0\x00\x00\x00\x00\x00\x00" + // 1.0 big-endian
		"\xc0\x00\x00\x00\x00\x00\x00\x00" // -2.0
	a, err := decodeBytes("lit.npy", []byte(file))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a.Shape, []int{2}) || !reflect.DeepEqual(a.Data, []float64{1, -2}) {
		t.Errorf("got %v %v", a.Shape, a.Data)
	}
}

// TestEncodeNPYHeader compares our header with the one numpy wrote for the
// shared Olivetti file (same shape; only the dtype differs).
func TestEncodeNPYHeader(t *testing.T) {
	numpy := "\x93NUMPY\x01\x00\x76\x00{'descr': '|u1', 'fortran_order': False, 'shape': (400, 64, 64), }" +
		strings.Repeat(" ", 51) + "\n"
	a := &Array{Shape: []int{400, 64, 64}, Data: make([]float64, 400*64*64)}
	var b bytes.Buffer
	if err := encodeNPY(&b, a); err != nil {
		t.Fatal(err)
	}
	got := b.String()[:128]
	want := strings.Replace(numpy, "|u1", "<f8", 1)
	if got != want {
		t.Errorf("header\n got %q\nwant %q", got, want)
	}
	if b.Len() != 128+8*len(a.Data) {
		t.Errorf("file length %d, want %d", b.Len(), 128+8*len(a.Data))
	}
}

func TestNPYRoundTrip(t *testing.T) {
	dir := t.TempDir()
	tests := []*Array{
		{Shape: []int{2, 3}, Data: []float64{1, -2.5, math.Pi, 1e-310, -0, 6}},
		{Shape: []int{2, 1, 2}, Data: []float64{1, 2, 3, 4}},
		{Shape: []int{4}, Data: []float64{1, 2, 3, math.MaxFloat64}},
		{Shape: []int{}, Data: []float64{7}},
	}
	for i, a := range tests {
		p := filepath.Join(dir, "a.npy")
		if err := WriteNPY(p, a); err != nil {
			t.Fatalf("%d: %v", i, err)
		}
		got, err := ReadArray(p, ReadOptions{})
		if err != nil {
			t.Fatalf("%d: %v", i, err)
		}
		if !reflect.DeepEqual(got, a) {
			t.Errorf("%d: got %+v, want %+v", i, got, a)
		}
		b, _ := os.ReadFile(p)
		if (len(b)-8*len(a.Data))%64 != 0 {
			t.Errorf("%d: data does not start on a 64-byte boundary", i)
		}
	}
}

func TestDecodeNPYErrors(t *testing.T) {
	le := binary.LittleEndian
	good := npyBytes(1, hdr("<f8", false, "(2, 2)"), f64s(le, 1, 2, 3, 4))
	nan := math.NaN()
	tests := []struct {
		name string
		file []byte
		line int
		want []string // substrings of the message
	}{
		{"empty", nil, 0, []string{"empty file"}},
		{"bad magic", []byte("hello world, this is text"), 0, []string{"not an NPY file"}},
		{"zip", []byte("PK\x03\x04rest of a zip"), 0, []string{"zip", ".npz"}},
		{"short magic", []byte("\x93NUM"), 0, []string{"truncated NPY header"}},
		{"no length", []byte("\x93NUMPY\x01\x00\x76"), 0, []string{"truncated NPY header"}},
		{"header cut", good[:40], 0, []string{"truncated NPY header"}},
		{"bad version", append([]byte("\x93NUMPY\x09\x00"), good[8:]...), 0, []string{"version 9.0"}},
		{"huge v2 header", []byte("\x93NUMPY\x02\x00\xff\xff\xff\xff{"), 0, []string{"implausibly large"}},
		{"data cut", good[:len(good)-3], 0, []string{"truncated data", "(2, 2)", "32 bytes"}},
		{"trailing", append(append([]byte{}, good...), 0, 0), 0, []string{"unexpected bytes"}},
		{"not a dict", npyBytes(1, "('<f8', False)", nil), 0, []string{"bad NPY header", "not a dictionary"}},
		{"missing shape", npyBytes(1, "{'descr': '<f8', 'fortran_order': False}", nil), 0, []string{"no 'shape' key"}},
		{"bad fortran", npyBytes(1, "{'descr': '<f8', 'fortran_order': 1, 'shape': (1,)}", nil), 0, []string{"fortran_order"}},
		{"negative dim", npyBytes(1, hdr("<f8", false, "(-1, 2)"), nil), 0, []string{"negative"}},
		{"float dim", npyBytes(1, hdr("<f8", false, "(1.5,)"), nil), 0, []string{"bad NPY header"}},
		{"unterminated", npyBytes(1, "{'descr': '<f8", nil), 0, []string{"unterminated string"}},
		{"garbage after dict", npyBytes(1, hdr("<f8", false, "(1,)")+" x", f64s(le, 1)), 0, []string{"after the dictionary"}},
		{"too big", npyBytes(1, hdr("<f8", false, "(65536, 65536, 65536, 65536, 65536)"), nil), 0, []string{"too large"}},
		{"complex", npyBytes(1, hdr("<c16", false, "(1,)"), make([]byte, 16)), 0, []string{"'<c16'", "complex"}},
		{"object", npyBytes(1, hdr("|O", false, "(1,)"), make([]byte, 8)), 0, []string{"Python object"}},
		{"bool", npyBytes(1, hdr("|b1", false, "(1,)"), []byte{1}), 0, []string{"bool"}},
		{"unicode", npyBytes(1, hdr("<U3", false, "(1,)"), make([]byte, 12)), 0, []string{"unicode string"}},
		{"structured", npyBytes(1, "{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (1,), }", make([]byte, 8)), 0, []string{"structured"}},
		{"f16 size", npyBytes(1, hdr("<f16", false, "(1,)"), make([]byte, 16)), 0, []string{"16-byte float"}},
		{"pipe multi-byte", npyBytes(1, hdr("|f8", false, "(1,)"), make([]byte, 8)), 0, []string{"'|' byte order"}},
		{"NaN rank 2", npyBytes(1, hdr("<f8", false, "(3, 4)"), f64s(le, 0, 1, 2, 3, 4, 5, 6, nan, 8, 9, 10, 11)),
			2, []string{"row 2, column 4: is NaN (index [1, 3])"}},
		{"NaN Fortran rank 2", npyBytes(1, hdr("<f8", true, "(2, 2)"), f64s(le, 0, 1, math.Inf(1), 3)),
			1, []string{"row 1, column 2: is +Inf (index [0, 1])"}},
		{"-Inf rank 1 f4", npyBytes(1, hdr("<f4", false, "(3,)"), f32s(le, 0, 1, float32(math.Inf(-1)))),
			3, []string{"row 3: is -Inf (index [2])"}},
		{"NaN rank 3", npyBytes(1, hdr(">f8", false, "(2, 2, 2)"), f64s(binary.BigEndian, 0, 1, 2, 3, 4, nan, 6, 7)),
			2, []string{"row 2: index [1, 0, 1]: is NaN"}},
		{"NaN f16", npyBytes(1, hdr("<f2", false, "()"), []byte{0x01, 0x7e}), 0, []string{"x.npy: is NaN"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decodeBytes("x.npy", tt.file)
			var ie *fault.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("want *InputError, got %T %v", err, err)
			}
			if ie.File != "x.npy" || ie.Line != tt.line {
				t.Errorf("File, Line = %q, %d; want x.npy, %d", ie.File, ie.Line, tt.line)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "dataio: x.npy") || strings.Contains(msg, "\n") {
				t.Errorf("message %q: want one line starting with the file", msg)
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q does not contain %q", msg, w)
				}
			}
		})
	}
}

// TestDecodeNPYStream reads through a reader of unknown length (as for
// .npz members and .gz files), which takes the incremental path.
func TestDecodeNPYStream(t *testing.T) {
	le := binary.LittleEndian
	good := npyBytes(1, hdr("<f8", false, "(2,)"), f64s(le, 1, 2))
	s := src{file: "s.npy", stream: true}
	a, err := decodeNPY(s, bytes.NewReader(good), -1)
	if err != nil || !reflect.DeepEqual(a.Data, []float64{1, 2}) {
		t.Fatalf("got %v, %v", a, err)
	}
	for _, b := range [][]byte{good[:len(good)-1], append(append([]byte{}, good...), 9)} {
		_, err := decodeNPY(s, bytes.NewReader(b), -1)
		var ie *fault.InputError
		if !errors.As(err, &ie) {
			t.Errorf("len %d: want *InputError, got %v", len(b), err)
		}
	}
	// A huge shape over a short stream must fail without allocating it.
	huge := npyBytes(1, hdr("<f8", false, "(100000000,)"), f64s(le, 1))
	if _, err := decodeNPY(s, bytes.NewReader(huge), -1); err == nil || !strings.Contains(err.Error(), "truncated data") {
		t.Errorf("huge shape: got %v", err)
	}
	// Past MaxDecodedBytes the header alone is refused.
	huger := npyBytes(1, hdr("<f8", false, "(100000000000,)"), f64s(le, 1))
	if _, err := decodeNPY(s, bytes.NewReader(huger), -1); err == nil || !strings.Contains(err.Error(), "dataio.MaxDecodedBytes") {
		t.Errorf("shape over the limit: got %v", err)
	}
	// A rank the caller refuses is refused from the header: the payload
	// (here absent) is never read.
	s.ranks = []int{2}
	cube := npyBytes(1, hdr("<f8", false, "(1000, 1000, 100)"), nil)
	if _, err := decodeNPY(s, bytes.NewReader(cube), -1); err == nil || !strings.Contains(err.Error(), "want a 2-D array, got shape (1000, 1000, 100)") {
		t.Errorf("wrong rank: got %v", err)
	}
}

func TestHalfToFloat64(t *testing.T) {
	tests := []struct {
		h    uint16
		want float64
	}{
		{0x0000, 0}, {0x3c00, 1}, {0xc000, -2}, {0x7bff, 65504}, {0x0400, math.Ldexp(1, -14)},
		{0x7c00, math.Inf(1)}, {0xfc00, math.Inf(-1)},
	}
	for _, tt := range tests {
		if got := halfToFloat64(tt.h); got != tt.want {
			t.Errorf("halfToFloat64(%#x) = %v, want %v", tt.h, got, tt.want)
		}
	}
	if !math.IsNaN(halfToFloat64(0x7e00)) {
		t.Error("0x7e00 should be NaN")
	}
}
