package dataio

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// WriteNPY writes a as a little-endian float64, C-order NPY 1.0 file,
// which numpy.load reads back unchanged.
func WriteNPY(path string, a *Array) error {
	if err := a.check(); err != nil {
		return err
	}
	return writeAtomic(path, func(w io.Writer) error { return encodeNPY(w, a) })
}

// WriteNPZ writes arrays to an .npz archive, one "<key>.npy" member each,
// compressed with deflate when compressed is set (numpy.savez_compressed)
// or stored otherwise (numpy.savez). Members are in sorted key order with
// a fixed timestamp, so equal inputs give identical files.
func WriteNPZ(path string, arrays map[string]*Array, compressed bool) error {
	for k, a := range arrays {
		if err := a.check(); err != nil {
			return fmt.Errorf("%w (key %q)", err, k)
		}
	}
	return writeAtomic(path, func(w io.Writer) error { return encodeNPZ(w, arrays, compressed) })
}

// WriteCSV writes an optional header (nil for none) and rows of numbers.
// Numbers are written in the shortest form that parses back to the same
// float64; NaN and ±Inf are written as NaN, +Inf and -Inf (which ReadCSV
// rejects, as it rejects any non-finite input). All rows must have the
// header's length, or the first row's when there is no header.
func WriteCSV(path string, header []string, rows [][]float64) error {
	return writeAtomic(path, func(w io.Writer) error { return encodeCSV(w, header, rows) })
}

// WriteTable writes a CSV of text cells (e.g. ids beside numbers, with
// NaN written as an empty cell by the caller), quoting as RFC 4180 needs.
func WriteTable(path string, header []string, rows [][]string) error {
	return writeAtomic(path, func(w io.Writer) error {
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
	})
}

// WriteJSON writes v as indented JSON with a trailing newline.
// encoding/json refuses NaN and ±Inf, so callers must map undefined
// values to nil (null) first.
func WriteJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("dataio: %s: %w", path, err)
	}
	b = append(b, '\n')
	return writeAtomic(path, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}

// writeAtomic writes a file so that readers never see it half written,
// and an existing file is never clobbered by a failed write: the data goes
// to a temporary file in the same directory (rename is atomic only within
// one file system) and is renamed over path once complete and synced.
func writeAtomic(path string, write func(io.Writer) error) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	mode := os.FileMode(0o644)
	if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() {
		mode = st.Mode().Perm() // keep the permissions of a file we replace
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return fmt.Errorf("dataio: %s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
			err = fmt.Errorf("dataio: %s: %w", path, err)
		}
	}()
	bw := bufio.NewWriterSize(f, 1<<16)
	if err := write(bw); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if err := f.Chmod(mode); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
