package dataio

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/tensor/membudget"
)

// arrayWhat names the array of s in a budget message.
func arrayWhat(s src) string {
	if s.key != "" {
		return "the array " + strconv.Quote(s.key) + " of " + s.file
	}
	return "the array of " + s.file
}

// npyMagic starts every NPY file.
const npyMagic = "\x93NUMPY"

// maxHeaderLen bounds the header we are willing to read. numpy itself
// refuses headers over 10000 bytes by default; a bound keeps a corrupt
// length field from making us allocate gigabytes.
const maxHeaderLen = 1 << 20

// maxElems bounds the element count so that every byte count we compute
// (elements x 8) fits in an int.
const maxElems = math.MaxInt / 16

// npyHeader is the parsed header dictionary.
type npyHeader struct {
	descr   string
	fortran bool
	shape   []int
}

// dtype is a supported element type.
type dtype struct {
	kind  byte             // 'f', 'i' or 'u'
	size  int              // bytes per element
	order binary.ByteOrder // byte order of multi-byte elements
}

// decodeNPY parses one NPY document from r. avail is the number of bytes
// r holds after the current position when known (a plain file), or -1
// (a compressed stream); when known it lets us allocate the data buffer
// at once and reject a truncated file before reading it.
//
// It never panics: every length, shape and dtype read from the input is
// validated before it is used for slicing or allocation.
func decodeNPY(s src, r io.Reader, avail int64) (*Array, error) {
	var pre [10]byte
	n, err := io.ReadFull(r, pre[:8])
	if err != nil && !isEOF(err) {
		return nil, readErr(s, err, "cannot read")
	}
	if n < len(npyMagic) || string(pre[:len(npyMagic)]) != npyMagic {
		if n >= 4 && string(pre[:4]) == "PK\x03\x04" {
			return nil, s.errf(0, "", "not an NPY file: it is a zip archive (an .npz? name it .npz)")
		}
		if n == 0 {
			return nil, s.errf(0, "", "empty file")
		}
		if n < len(npyMagic) && string(pre[:n]) == npyMagic[:n] {
			return nil, s.errf(0, "", "truncated NPY header")
		}
		return nil, s.errf(0, "", "not an NPY file (missing the \\x93NUMPY magic string)")
	}
	if n < 8 {
		return nil, s.errf(0, "", "truncated NPY header")
	}
	major, minor := pre[6], pre[7]
	var hlen int
	switch major {
	case 1:
		if _, err := io.ReadFull(r, pre[8:10]); err != nil {
			return nil, readErr(s, err, "truncated NPY header")
		}
		hlen = int(binary.LittleEndian.Uint16(pre[8:10]))
	case 2, 3:
		var l [4]byte
		if _, err := io.ReadFull(r, l[:]); err != nil {
			return nil, readErr(s, err, "truncated NPY header")
		}
		hlen64 := uint64(binary.LittleEndian.Uint32(l[:]))
		if hlen64 > maxHeaderLen {
			return nil, s.errf(0, "", fmt.Sprintf("NPY header length %d is implausibly large (corrupt file?)", hlen64))
		}
		hlen = int(hlen64)
	default:
		return nil, s.errf(0, "", fmt.Sprintf("unsupported NPY format version %d.%d (want 1.x, 2.x or 3.x)", major, minor))
	}
	preLen := int64(8 + 2)
	if major != 1 {
		preLen = 8 + 4
	}
	if avail >= 0 {
		avail -= preLen
		if int64(hlen) > avail {
			return nil, s.errf(0, "", fmt.Sprintf("truncated NPY header: header length is %d bytes but only %d follow", hlen, max(avail, 0)))
		}
	}
	hbuf := make([]byte, hlen)
	if _, err := io.ReadFull(r, hbuf); err != nil {
		return nil, readErr(s, err, "truncated NPY header")
	}
	if avail >= 0 {
		avail -= int64(hlen)
	}
	if major < 3 {
		for _, c := range hbuf {
			if c >= 0x80 {
				return nil, s.errf(0, "", "bad NPY header: non-ASCII byte in a version 1/2 header")
			}
		}
	} else if !utf8.Valid(hbuf) {
		return nil, s.errf(0, "", "bad NPY header: not valid UTF-8")
	}
	h, err := parseHeader(hbuf)
	if err != nil {
		return nil, s.errf(0, "", "bad NPY header: "+err.Error())
	}
	dt, err := parseDescr(h.descr)
	if err != nil {
		return nil, s.errf(0, "", err.Error())
	}
	nelem := 1
	for _, d := range h.shape {
		if d != 0 && nelem > maxElems/d {
			return nil, s.errf(0, "", fmt.Sprintf("shape %s is too large", fmtShape(h.shape)))
		}
		nelem *= d
	}
	nbytes := nelem * dt.size
	if s.ranks != nil && !slices.Contains(s.ranks, len(h.shape)) {
		return nil, s.errf(0, "", fmt.Sprintf("want a %s array, got shape %s", fmtRanks(s.ranks), fmtShape(h.shape)))
	}
	if int64(nelem) > MaxDecodedBytes/8 {
		return nil, s.errf(0, "", fmt.Sprintf("shape %s needs %.1f GiB as float64, more than the limit of %.1f GiB (dataio.MaxDecodedBytes)",
			fmtShape(h.shape), float64(nelem)*8/(1<<30), float64(MaxDecodedBytes)/(1<<30)))
	}
	// The raw bytes and the float64 values they become, priced against
	// the memory budget before either is allocated: a shape is a promise
	// of the file, and a small compressed file can declare gigabytes.
	if err := membudget.CheckBytes(arrayWhat(s), nelem, 1, int64(nbytes)+int64(nelem)*8); err != nil {
		return nil, &fault.InputError{File: s.file, Key: s.key, Msg: fmt.Sprintf("shape %s: %v", fmtShape(h.shape), err), Err: err}
	}

	switch {
	case avail >= 0:
		if int64(nbytes) > avail {
			return nil, s.errf(0, "", fmt.Sprintf("truncated data: shape %s of %s needs %d bytes, file has %d", fmtShape(h.shape), h.descr, nbytes, avail))
		}
		if int64(nbytes) < avail {
			return nil, s.errf(0, "", fmt.Sprintf("%d unexpected bytes after the data of shape %s (wrong shape in header?)", avail-int64(nbytes), fmtShape(h.shape)))
		}
	case s.compressed > 0 && int64(nbytes) > decompressedLimit(s.compressed):
		return nil, bombError(s, s.compressed, fmt.Sprintf("shape %s declares %s of data,", fmtShape(h.shape), fmtBytes(int64(nbytes))))
	}
	// The values, decoded a chunk of bytes at a time as they arrive: the
	// raw bytes are never held whole beside them (a 2 GiB matrix read
	// from an .npz member took 6 GiB while its buffer grew). The shape
	// was priced above; memory is touched only as data arrives.
	data := make([]float64, nelem)
	chunk := make([]byte, min(nbytes, (1<<20)/dt.size*dt.size))
	for off := 0; off < nelem; {
		k := min(len(chunk)/dt.size, nelem-off)
		got, err := io.ReadFull(r, chunk[:k*dt.size])
		if err != nil {
			if isEOF(err) && avail < 0 {
				return nil, s.errf(0, "", fmt.Sprintf("truncated data: shape %s of %s needs %d bytes, got %d", fmtShape(h.shape), h.descr, nbytes, off*dt.size+got))
			}
			return nil, readErr(s, err, "truncated data")
		}
		convert(data[off:off+k], chunk[:k*dt.size], dt)
		off += k
	}
	if avail < 0 {
		// Size unknown: one byte past the end detects trailing garbage
		// and, for zip members, makes archive/zip verify the checksum at
		// EOF.
		var one [1]byte
		if n, err := io.ReadFull(r, one[:]); n > 0 {
			return nil, s.errf(0, "", fmt.Sprintf("unexpected bytes after the data of shape %s (wrong shape in header?)", fmtShape(h.shape)))
		} else if err != io.EOF {
			// A truncated gzip stream's io.ErrUnexpectedEOF among them.
			return nil, readErr(s, err, "cannot read data")
		}
	}
	if h.fortran && len(h.shape) > 1 {
		data = fortranToC(data, h.shape)
	}
	a := &Array{Shape: h.shape, Data: data}
	if dt.kind == 'f' {
		if err := checkFinite(s, a); err != nil {
			return nil, err
		}
	}
	return a, nil
}

func isEOF(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// readErr turns a short read into an InputError and keeps other I/O
// failures as plain errors (they are not the user's input's fault).
func readErr(s src, err error, msg string) error {
	if ie := (*fault.InputError)(nil); errors.As(err, &ie) {
		return ie // already says what is wrong (a decompression bomb)
	}
	if isEOF(err) {
		return s.errf(0, "", msg)
	}
	if s.stream {
		// Behind a decompressor every read error is a corrupt file
		// (bad deflate stream, checksum mismatch).
		e := s.errf(0, "", msg+": "+err.Error())
		e.Err = err
		return e
	}
	return fmt.Errorf("dataio: %s: %w", s.file, err)
}

// convert decodes raw elements of type dt into dst.
func convert(dst []float64, raw []byte, dt dtype) {
	o := dt.order
	switch dt.kind {
	case 'f':
		switch dt.size {
		case 2:
			for i := range dst {
				dst[i] = halfToFloat64(o.Uint16(raw[2*i:]))
			}
		case 4:
			for i := range dst {
				dst[i] = float64(math.Float32frombits(o.Uint32(raw[4*i:])))
			}
		case 8:
			for i := range dst {
				dst[i] = math.Float64frombits(o.Uint64(raw[8*i:]))
			}
		}
	case 'i':
		switch dt.size {
		case 1:
			for i := range dst {
				dst[i] = float64(int8(raw[i]))
			}
		case 2:
			for i := range dst {
				dst[i] = float64(int16(o.Uint16(raw[2*i:])))
			}
		case 4:
			for i := range dst {
				dst[i] = float64(int32(o.Uint32(raw[4*i:])))
			}
		case 8:
			for i := range dst {
				dst[i] = float64(int64(o.Uint64(raw[8*i:])))
			}
		}
	case 'u':
		switch dt.size {
		case 1:
			for i := range dst {
				dst[i] = float64(raw[i])
			}
		case 2:
			for i := range dst {
				dst[i] = float64(o.Uint16(raw[2*i:]))
			}
		case 4:
			for i := range dst {
				dst[i] = float64(o.Uint32(raw[4*i:]))
			}
		case 8:
			for i := range dst {
				dst[i] = float64(o.Uint64(raw[8*i:]))
			}
		}
	}
}

// halfToFloat64 converts an IEEE 754 binary16 value.
func halfToFloat64(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	exp := int(h>>10) & 0x1f
	frac := float64(h & 0x3ff)
	switch exp {
	case 0:
		return sign * math.Ldexp(frac, -24)
	case 0x1f:
		if frac != 0 {
			return math.NaN()
		}
		return math.Inf(int(sign))
	}
	return sign * math.Ldexp(1+frac/1024, exp-15)
}

// fortranToC reorders column-major data of the given shape into row-major
// order. Walking the C-order index like an odometer and keeping the
// Fortran offset up to date avoids a division per element.
func fortranToC(f []float64, shape []int) []float64 {
	n := len(f)
	c := make([]float64, n)
	if n == 0 {
		return c
	}
	rank := len(shape)
	fstride := make([]int, rank)
	st := 1
	for k := 0; k < rank; k++ {
		fstride[k] = st
		st *= shape[k]
	}
	idx := make([]int, rank)
	off := 0
	for i := 0; i < n; i++ {
		c[i] = f[off]
		// Increment the last axis fastest, as C order does.
		for k := rank - 1; k >= 0; k-- {
			idx[k]++
			off += fstride[k]
			if idx[k] < shape[k] {
				break
			}
			off -= idx[k] * fstride[k]
			idx[k] = 0
		}
	}
	return c
}

// checkFinite reports the first NaN or Inf with its position.
func checkFinite(s src, a *Array) error {
	for i, v := range a.Data {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nonFiniteAt(s, a.Shape, i, v)
		}
	}
	return nil
}

func nonFiniteAt(s src, shape []int, flat int, v float64) *fault.InputError {
	idx := unravel(flat, shape)
	what := "is " + fmtNonFinite(v)
	switch len(shape) {
	case 0:
		return s.errf(0, "", what)
	case 1:
		return s.errf(idx[0]+1, "", fmt.Sprintf("%s (index [%d])", what, idx[0]))
	case 2:
		return s.errf(idx[0]+1, "column "+strconv.Itoa(idx[1]+1), fmt.Sprintf("%s (index [%d, %d])", what, idx[0], idx[1]))
	}
	return s.errf(idx[0]+1, "index "+fmtIndex(idx), what)
}

func fmtNonFinite(v float64) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

func unravel(flat int, shape []int) []int {
	idx := make([]int, len(shape))
	for k := len(shape) - 1; k >= 0; k-- {
		if shape[k] > 0 {
			idx[k] = flat % shape[k]
			flat /= shape[k]
		}
	}
	return idx
}

func fmtIndex(idx []int) string {
	parts := make([]string, len(idx))
	for i, v := range idx {
		parts[i] = strconv.Itoa(v)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// fmtShape formats a shape as numpy prints it: (), (5,), (3, 4).
func fmtShape(shape []int) string {
	if len(shape) == 1 {
		return "(" + strconv.Itoa(shape[0]) + ",)"
	}
	parts := make([]string, len(shape))
	for i, v := range shape {
		parts[i] = strconv.Itoa(v)
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// dtypeKinds names the numpy kinds we refuse, for the error message.
var dtypeKinds = map[byte]string{
	'b': "bool",
	'c': "complex",
	'O': "Python object",
	'U': "unicode string",
	'S': "byte string",
	'a': "byte string",
	'V': "void/structured",
	'M': "datetime",
	'm': "timedelta",
}

// parseDescr accepts float16/32/64 and signed/unsigned integers of 1, 2,
// 4 and 8 bytes, in either byte order.
func parseDescr(d string) (dtype, error) {
	bad := func(why string) (dtype, error) {
		return dtype{}, fmt.Errorf("unsupported dtype '%s' (%s); want float32/float64 or an integer type such as uint8", d, why)
	}
	if len(d) < 2 {
		return bad("unknown")
	}
	var order binary.ByteOrder
	switch d[0] {
	case '<', '=':
		// '=' (native) is never written by numpy; treat it as the
		// little-endian that every platform numpy runs on today uses.
		order = binary.LittleEndian
	case '>':
		order = binary.BigEndian
	case '|':
		order = nil
	default:
		return bad("no byte-order character")
	}
	kind := d[1]
	if name, ok := dtypeKinds[kind]; ok {
		return bad(name)
	}
	size, err := strconv.Atoi(d[2:])
	if err != nil {
		return bad("unknown")
	}
	switch kind {
	case 'f':
		if size != 2 && size != 4 && size != 8 {
			return bad(fmt.Sprintf("%d-byte float", size))
		}
	case 'i', 'u':
		if size != 1 && size != 2 && size != 4 && size != 8 {
			return bad(fmt.Sprintf("%d-byte integer", size))
		}
	default:
		return bad("unknown")
	}
	if order == nil {
		if size != 1 {
			return bad("'|' byte order on a multi-byte type")
		}
		order = binary.LittleEndian
	}
	return dtype{kind: kind, size: size, order: order}, nil
}

// pyValue is a parsed Python literal from the header dictionary.
type pyValue struct {
	kind  byte // 's' string, 'b' bool, 'i' int, 't' tuple, 'l' list, 'd' dict, 'n' None
	str   string
	b     bool
	i     int
	items []pyValue
}

// maxDepth bounds literal nesting so fuzzed input cannot exhaust the stack.
const maxDepth = 16

// headerParser parses the Python dict literal numpy writes, e.g.
// {'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }.
// It is a strict recursive-descent parser over the literals numpy can
// produce (strings, booleans, None, ints, tuples, lists, dicts), which
// unlike substring matching is indifferent to key order and spacing.
type headerParser struct {
	b   []byte
	pos int
}

func parseHeader(b []byte) (npyHeader, error) {
	p := &headerParser{b: b}
	v, err := p.value(0)
	if err != nil {
		return npyHeader{}, err
	}
	p.space()
	if p.pos != len(p.b) {
		return npyHeader{}, fmt.Errorf("unexpected %q after the dictionary", p.b[p.pos])
	}
	if v.kind != 'd' {
		return npyHeader{}, errors.New("not a dictionary")
	}
	var h npyHeader
	var seen [3]bool
	for i := 0; i+1 < len(v.items); i += 2 {
		k, val := v.items[i], v.items[i+1]
		if k.kind != 's' {
			continue
		}
		switch k.str {
		case "descr":
			seen[0] = true
			switch val.kind {
			case 's':
				h.descr = val.str
			case 'l':
				return npyHeader{}, errors.New("structured dtypes (descr is a list of fields) are not supported")
			default:
				return npyHeader{}, errors.New("'descr' is not a string")
			}
		case "fortran_order":
			seen[1] = true
			if val.kind != 'b' {
				return npyHeader{}, errors.New("'fortran_order' is not True or False")
			}
			h.fortran = val.b
		case "shape":
			seen[2] = true
			if val.kind != 't' && val.kind != 'l' {
				return npyHeader{}, errors.New("'shape' is not a tuple")
			}
			h.shape = make([]int, len(val.items))
			for j, it := range val.items {
				if it.kind != 'i' {
					return npyHeader{}, errors.New("'shape' holds a non-integer")
				}
				h.shape[j] = it.i
			}
		}
	}
	for i, name := range []string{"descr", "fortran_order", "shape"} {
		if !seen[i] {
			return npyHeader{}, fmt.Errorf("no '%s' key", name)
		}
	}
	return h, nil
}

func (p *headerParser) space() {
	for p.pos < len(p.b) {
		switch p.b[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *headerParser) value(depth int) (pyValue, error) {
	if depth > maxDepth {
		return pyValue{}, errors.New("nested too deeply")
	}
	p.space()
	if p.pos >= len(p.b) {
		return pyValue{}, errors.New("unexpected end")
	}
	c := p.b[p.pos]
	switch {
	case c == '\'' || c == '"':
		return p.str()
	case c == '(':
		return p.seq(depth, '(', ')', 't')
	case c == '[':
		return p.seq(depth, '[', ']', 'l')
	case c == '{':
		return p.dict(depth)
	case c >= '0' && c <= '9':
		return p.int()
	case c == '-':
		return pyValue{}, errors.New("negative number")
	}
	for _, w := range []struct {
		word string
		v    pyValue
	}{{"True", pyValue{kind: 'b', b: true}}, {"False", pyValue{kind: 'b'}}, {"None", pyValue{kind: 'n'}}} {
		if bytes.HasPrefix(p.b[p.pos:], []byte(w.word)) {
			p.pos += len(w.word)
			return w.v, nil
		}
	}
	return pyValue{}, fmt.Errorf("unexpected %q", c)
}

func (p *headerParser) str() (pyValue, error) {
	q := p.b[p.pos]
	p.pos++
	start := p.pos
	for p.pos < len(p.b) {
		switch p.b[p.pos] {
		case '\\':
			// numpy never escapes inside its header strings.
			return pyValue{}, errors.New("escape sequence in string")
		case q:
			s := string(p.b[start:p.pos])
			p.pos++
			return pyValue{kind: 's', str: s}, nil
		}
		p.pos++
	}
	return pyValue{}, errors.New("unterminated string")
}

func (p *headerParser) int() (pyValue, error) {
	start := p.pos
	for p.pos < len(p.b) && p.b[p.pos] >= '0' && p.b[p.pos] <= '9' {
		p.pos++
	}
	v, err := strconv.Atoi(string(p.b[start:p.pos]))
	if err != nil || v > maxElems {
		return pyValue{}, fmt.Errorf("integer %s out of range", p.b[start:p.pos])
	}
	// Python 2 numpy wrote long integers as 3L.
	if p.pos < len(p.b) && p.b[p.pos] == 'L' {
		p.pos++
	}
	return pyValue{kind: 'i', i: v}, nil
}

func (p *headerParser) seq(depth int, open, close, kind byte) (pyValue, error) {
	p.pos++ // open
	v := pyValue{kind: kind}
	for {
		p.space()
		if p.pos < len(p.b) && p.b[p.pos] == close {
			p.pos++
			return v, nil
		}
		it, err := p.value(depth + 1)
		if err != nil {
			return pyValue{}, err
		}
		v.items = append(v.items, it)
		p.space()
		if p.pos >= len(p.b) {
			return pyValue{}, fmt.Errorf("unterminated %q", open)
		}
		switch p.b[p.pos] {
		case ',':
			p.pos++
		case close:
			p.pos++
			return v, nil
		default:
			return pyValue{}, fmt.Errorf("unexpected %q in %q...%q", p.b[p.pos], open, close)
		}
	}
}

func (p *headerParser) dict(depth int) (pyValue, error) {
	p.pos++ // {
	v := pyValue{kind: 'd'}
	for {
		p.space()
		if p.pos < len(p.b) && p.b[p.pos] == '}' {
			p.pos++
			return v, nil
		}
		k, err := p.value(depth + 1)
		if err != nil {
			return pyValue{}, err
		}
		p.space()
		if p.pos >= len(p.b) || p.b[p.pos] != ':' {
			return pyValue{}, errors.New("missing ':' after a key")
		}
		p.pos++
		val, err := p.value(depth + 1)
		if err != nil {
			return pyValue{}, err
		}
		v.items = append(v.items, k, val)
		p.space()
		if p.pos >= len(p.b) {
			return pyValue{}, errors.New("unterminated dictionary")
		}
		switch p.b[p.pos] {
		case ',':
			p.pos++
		case '}':
			p.pos++
			return v, nil
		default:
			return pyValue{}, fmt.Errorf("unexpected %q in the dictionary", p.b[p.pos])
		}
	}
}

// encodeNPY writes a as a little-endian float64, C-order NPY 1.0 file.
func encodeNPY(w io.Writer, a *Array) error {
	if err := a.check(); err != nil {
		return err
	}
	if err := encodeNPYHeader(w, "<f8", a.Shape); err != nil {
		return err
	}
	buf := make([]byte, 0, 8*1024)
	for _, v := range a.Data {
		buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(v))
		if len(buf) == cap(buf) {
			if _, err := w.Write(buf); err != nil {
				return err
			}
			buf = buf[:0]
		}
	}
	_, err := w.Write(buf)
	return err
}

// encodeNPYHeader writes an NPY 1.0 header for a C-order array of
// dtype descr and shape.
func encodeNPYHeader(w io.Writer, descr string, shape []int) error {
	dict := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, fmtShape(shape))
	// numpy pads the header with spaces and a final newline so the data
	// starts on a 64-byte boundary (aligned loads, and memmap friendly).
	total := 10 + len(dict) + 1
	pad := (64 - total%64) % 64
	hlen := len(dict) + pad + 1
	if hlen > math.MaxUint16 {
		return fmt.Errorf("dataio: shape %s makes an NPY 1.0 header too long", fmtShape(shape))
	}
	hdr := make([]byte, 0, 10+hlen)
	hdr = append(hdr, npyMagic...)
	hdr = append(hdr, 1, 0)
	hdr = binary.LittleEndian.AppendUint16(hdr, uint16(hlen))
	hdr = append(hdr, dict...)
	hdr = append(hdr, bytes.Repeat([]byte{' '}, pad)...)
	hdr = append(hdr, '\n')
	_, err := w.Write(hdr)
	return err
}

// fmtRanks writes accepted ranks as "2-D" or "2-D or 3-D".
func fmtRanks(ranks []int) string {
	parts := make([]string, len(ranks))
	for i, r := range ranks {
		parts[i] = strconv.Itoa(r) + "-D"
	}
	return strings.Join(parts, " or ")
}
