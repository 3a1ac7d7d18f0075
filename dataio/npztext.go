package dataio

import (
	"archive/zip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/genlens/genlens/fault"
	"gonum.org/v1/gonum/mat"
)

// NPZContents is an .npz archive of float64 arrays, integer scalars and
// text scalars, as WriteNPZContents writes it. Texts are NumPy unicode
// scalars (dtype '<U…', what np.array("text") holds), so the archive
// needs no pickles: np.load opens it with its defaults and
// str(npz["key"]) is the text.
type NPZContents struct {
	Arrays map[string]*Array // float64, any shape ('<f8')
	Ints   map[string]int64  // 0-d int64 ('<i8')
	Texts  map[string]string // 0-d unicode ('<U<length>')
	// Symmetric are float64 (d, d) arrays ('<f8') written from a
	// symmetric matrix's upper triangle a row at a time: a covariance of
	// 16384 features is not copied whole (2 GiB) to be written.
	Symmetric map[string]*mat.SymDense
}

// MaxNPZText bounds the length, in code points, of a text scalar
// ReadNPZText reads, so a corrupt header cannot make it allocate
// gigabytes.
const MaxNPZText = 1 << 16

// WriteNPZContents writes c as an uncompressed .npz archive, one member
// per key in sorted key order with a fixed timestamp, so equal contents
// give identical bytes. A key may appear in one map only.
func WriteNPZContents(path string, c NPZContents) error {
	return writeAtomic(path, func(w io.Writer) error { return EncodeNPZContents(w, c) })
}

// EncodeNPZContents writes c to w as WriteNPZContents does.
func EncodeNPZContents(w io.Writer, c NPZContents) error {
	kinds := map[string]byte{}
	add := func(k string, kind byte) error {
		if k == "" {
			return errors.New("dataio: empty .npz key")
		}
		if _, dup := kinds[k]; dup {
			return fmt.Errorf("dataio: .npz key %q given twice", k)
		}
		kinds[k] = kind
		return nil
	}
	for k, a := range c.Arrays {
		if err := a.check(); err != nil {
			return fmt.Errorf("%w (key %q)", err, k)
		}
		if err := add(k, 'f'); err != nil {
			return err
		}
	}
	for k := range c.Ints {
		if err := add(k, 'i'); err != nil {
			return err
		}
	}
	for k, m := range c.Symmetric {
		if m == nil {
			return fmt.Errorf("dataio: nil symmetric matrix (key %q)", k)
		}
		if err := add(k, 's'); err != nil {
			return err
		}
	}
	for k, t := range c.Texts {
		if !utf8.ValidString(t) {
			return fmt.Errorf("dataio: .npz text %q is not valid UTF-8", k)
		}
		if err := add(k, 'U'); err != nil {
			return err
		}
	}
	keys := make([]string, 0, len(kinds))
	for k := range kinds {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	zw := zip.NewWriter(w)
	for _, k := range keys {
		fw, err := zw.CreateHeader(&zip.FileHeader{Name: k + ".npy", Method: zip.Store, Modified: npzTime})
		if err != nil {
			return err
		}
		switch kinds[k] {
		case 'f':
			err = encodeNPY(fw, c.Arrays[k])
		case 's':
			err = encodeSymNPY(fw, c.Symmetric[k])
		case 'i':
			if err = encodeNPYHeader(fw, "<i8", nil); err == nil {
				_, err = fw.Write(binary.LittleEndian.AppendUint64(nil, uint64(c.Ints[k])))
			}
		case 'U':
			err = encodeText(fw, c.Texts[k])
		}
		if err != nil {
			return err
		}
	}
	return zw.Close()
}

// encodeSymNPY writes m as a C-order (d, d) float64 array, each row
// assembled from the upper triangle (the column above the diagonal, then
// the row from it).
func encodeSymNPY(w io.Writer, m *mat.SymDense) error {
	d := m.SymmetricDim()
	if err := encodeNPYHeader(w, "<f8", []int{d, d}); err != nil {
		return err
	}
	raw := m.RawSymmetric()
	buf := make([]byte, 8*d)
	for i := range d {
		for j := range i {
			binary.LittleEndian.PutUint64(buf[8*j:], math.Float64bits(raw.Data[j*raw.Stride+i]))
		}
		for j := i; j < d; j++ {
			binary.LittleEndian.PutUint64(buf[8*j:], math.Float64bits(raw.Data[i*raw.Stride+j]))
		}
		if _, err := w.Write(buf); err != nil {
			return err
		}
	}
	return nil
}

// encodeText writes t as a 0-d NumPy unicode array: UTF-32LE code points,
// at least one (NumPy's dtype for "" is '<U1', padded with NUL).
func encodeText(w io.Writer, t string) error {
	runes := []rune(t)
	n := max(1, len(runes))
	if err := encodeNPYHeader(w, "<U"+strconv.Itoa(n), nil); err != nil {
		return err
	}
	b := make([]byte, 0, 4*n)
	for _, r := range runes {
		b = binary.LittleEndian.AppendUint32(b, uint32(r))
	}
	for len(b) < 4*n {
		b = append(b, 0, 0, 0, 0)
	}
	_, err := w.Write(b)
	return err
}

// ReadNPZText reads the text scalar key of the .npz archive path in fsys:
// a 0-d NumPy unicode array ('<U…'), as np.savez(path, key="text") and
// WriteNPZContents write it. Trailing NUL code points are dropped, as
// NumPy does.
func ReadNPZText(fsys fs.FS, path, key string) (string, error) {
	zr, closeFn, err := openNPZ(fsys, path)
	if err != nil {
		return "", err
	}
	defer closeFn()
	members, keys, err := npzMembers(path, zr)
	if err != nil {
		return "", err
	}
	f, ok := members[key]
	if !ok {
		return "", &fault.InputError{File: path, Key: key, Msg: fmt.Sprintf("no array named %q; keys: %s", key, strings.Join(keys, ", "))}
	}
	bad := func(msg string) error { return &fault.InputError{File: path, Key: key, Msg: msg} }
	rc, err := f.Open()
	if err != nil {
		return "", &fault.InputError{File: path, Key: key, Msg: "cannot read member: " + err.Error(), Err: err}
	}
	defer rc.Close()
	var pre [10]byte
	if _, err := io.ReadFull(rc, pre[:]); err != nil || string(pre[:6]) != npyMagic {
		return "", bad("not an NPY member")
	}
	if pre[6] != 1 {
		return "", bad(fmt.Sprintf("text scalar in NPY format version %d.%d; want 1.0", pre[6], pre[7]))
	}
	hbuf := make([]byte, binary.LittleEndian.Uint16(pre[8:10]))
	if _, err := io.ReadFull(rc, hbuf); err != nil {
		return "", bad("truncated NPY header")
	}
	h, err := parseHeader(hbuf)
	if err != nil {
		return "", bad("bad NPY header: " + err.Error())
	}
	if len(h.shape) != 0 || len(h.descr) < 3 || h.descr[:2] != "<U" {
		return "", bad(fmt.Sprintf("want a text scalar (dtype '<U…', shape ()), got dtype '%s', shape %s", h.descr, fmtShape(h.shape)))
	}
	n, err := strconv.Atoi(h.descr[2:])
	if err != nil || n < 1 || n > MaxNPZText {
		return "", bad(fmt.Sprintf("text dtype '%s': want '<U1' to '<U%d'", h.descr, MaxNPZText))
	}
	raw := make([]byte, 4*n)
	if _, err := io.ReadFull(rc, raw); err != nil {
		return "", bad("truncated text")
	}
	runes := make([]rune, 0, n)
	for i := 0; i < n; i++ {
		r := rune(binary.LittleEndian.Uint32(raw[4*i:]))
		if !utf8.ValidRune(r) {
			return "", bad(fmt.Sprintf("code point %d of the text is not valid Unicode (%#x)", i, uint32(r)))
		}
		runes = append(runes, r)
	}
	for len(runes) > 0 && runes[len(runes)-1] == 0 {
		runes = runes[:len(runes)-1]
	}
	return string(runes), nil
}
