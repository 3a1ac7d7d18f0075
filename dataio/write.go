package dataio

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"

	"github.com/genlens/genlens/internal/atomicfile"
)

// EncodeNPY writes a to w as a little-endian float64, C-order NPY 1.0
// file, which numpy.load reads back unchanged.
func EncodeNPY(w io.Writer, a *Array) error {
	if err := a.check(); err != nil {
		return err
	}
	return encodeNPY(w, a)
}

// WriteNPY writes a to the file path as EncodeNPY does.
func WriteNPY(path string, a *Array) error {
	if err := a.check(); err != nil {
		return err
	}
	return writeAtomic(path, func(w io.Writer) error { return encodeNPY(w, a) })
}

// EncodeNPZ writes arrays to w as an .npz archive, one "<key>.npy" member
// each, compressed with deflate when compressed is set
// (numpy.savez_compressed) or stored otherwise (numpy.savez). Members are
// in sorted key order with a fixed timestamp, so equal inputs give
// identical files.
func EncodeNPZ(w io.Writer, arrays map[string]*Array, compressed bool) error {
	if err := checkArrays(arrays); err != nil {
		return err
	}
	return encodeNPZ(w, arrays, compressed)
}

// WriteNPZ writes arrays to the file path as EncodeNPZ does.
func WriteNPZ(path string, arrays map[string]*Array, compressed bool) error {
	if err := checkArrays(arrays); err != nil {
		return err
	}
	return writeAtomic(path, func(w io.Writer) error { return encodeNPZ(w, arrays, compressed) })
}

func checkArrays(arrays map[string]*Array) error {
	for k, a := range arrays {
		if err := a.check(); err != nil {
			return fmt.Errorf("%w (key %q)", err, k)
		}
	}
	return nil
}

// EncodeCSV writes to w an optional header (nil for none) and rows of
// numbers. Numbers are written in the shortest form that parses back to
// the same float64; NaN and ±Inf are written as NaN, +Inf and -Inf (which
// ReadCSV rejects, as it rejects any non-finite input). All rows must have
// the header's length, or the first row's when there is no header.
func EncodeCSV(w io.Writer, header []string, rows [][]float64) error {
	return encodeCSV(w, header, rows)
}

// WriteCSV writes the file path as EncodeCSV does.
func WriteCSV(path string, header []string, rows [][]float64) error {
	return writeAtomic(path, func(w io.Writer) error { return encodeCSV(w, header, rows) })
}

// EncodeTable writes a CSV of text cells (e.g. ids beside numbers, with
// NaN written as an empty cell by the caller), quoting as RFC 4180 needs;
// a nil header writes none.
func EncodeTable(w io.Writer, header []string, rows [][]string) error {
	cw := csv.NewWriter(w)
	if header != nil {
		if err := cw.Write(header); err != nil {
			return err
		}
	}
	if err := cw.WriteAll(rows); err != nil {
		return err
	}
	cw.Flush()
	return cw.Error()
}

// WriteTable writes the file path as EncodeTable does.
func WriteTable(path string, header []string, rows [][]string) error {
	return writeAtomic(path, func(w io.Writer) error { return EncodeTable(w, header, rows) })
}

// EncodeJSON writes v as every JSON file genlens writes beside a result
// is written, and as --json prints it: indented by two spaces, with a
// trailing newline. encoding/json refuses NaN and ±Inf, so callers must
// map undefined values to nil (null) first.
func EncodeJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// WriteJSON writes the file path as EncodeJSON does.
func WriteJSON(path string, v any) error {
	return writeAtomic(path, func(w io.Writer) error { return EncodeJSON(w, v) })
}

// writeAtomic writes path through atomicfile: readers never see a half
// written file and a failed write leaves the old one in place.
func writeAtomic(path string, write func(io.Writer) error) error {
	if err := atomicfile.Write(path, write); err != nil {
		return fmt.Errorf("dataio: %s: %w", path, err)
	}
	return nil
}

// DecodeNPY reads one .npy document from r (a request body, a pipe);
// name names it in errors. It bounds what it allocates as ReadArray does
// for a file, reading the data as they arrive.
func DecodeNPY(r io.Reader, name string) (*Array, error) {
	return decodeNPY(src{file: name}, r, -1)
}

// DecodeCSV reads a CSV of numbers from r as ReadCSV reads a file; name
// names it in errors.
func DecodeCSV(r io.Reader, name string) (header []string, a *Array, err error) {
	return decodeCSV(src{file: name}, r, ',')
}
