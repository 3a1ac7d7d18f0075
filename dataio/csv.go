package dataio

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"strconv"
	"strings"
)

// ReadCSV reads a numeric CSV file as a rank-2 array and returns its
// header (nil when the file has none).
//
// The first non-blank row is a header if any of its fields does not parse
// as a number. Blank lines and lines starting with '#' (np.savetxt's
// header style) are skipped. Fields may be quoted and padded with spaces.
// Every row must have the same number of fields, and every value must be a
// finite number. A ".csv.gz" file is decompressed on the fly.
func ReadCSV(path string) (header []string, a *Array, err error) {
	return ReadCSVFS(HostFS, path)
}

// ReadCSVFS is ReadCSV on the file name in fsys.
func ReadCSVFS(fsys fs.FS, path string) (header []string, a *Array, err error) {
	return ReadCSVSepFS(fsys, path, ',')
}

// ReadCSVSepFS is ReadCSVFS on a file whose fields are separated by sep
// (see ParseSep; 0 is the comma).
func ReadCSVSepFS(fsys fs.FS, path string, sep rune) (header []string, a *Array, err error) {
	_, gz := fileExt(path)
	header, a, err = readCSVFile(fsys, path, gz, sep)
	if err != nil {
		return nil, nil, err
	}
	return header, a, nil
}

func readCSVFile(fsys fs.FS, path string, gz bool, sep rune) ([]string, *Array, error) {
	r, _, closeFn, err := openInput(fsys, path, gz)
	if err != nil {
		return nil, nil, err
	}
	defer closeFn()
	s := src{file: path, stream: gz}
	if gz {
		s.compressed = fileSize(fsys, path)
	}
	return decodeCSV(s, r, sep)
}

// decodeCSV does the work of ReadCSV on any reader, with fields
// separated by sep (0: the comma).
func decodeCSV(s src, r io.Reader, sep rune) ([]string, *Array, error) {
	sep = sepOf(sep)
	cr := newCSVReader(r, sep)
	cr.ReuseRecord = true

	var (
		header    []string
		data      []float64
		ncols     int
		firstLine int // line of the first data row, for the ragged-row message
		rows      int
	)
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				e := s.errf(pe.Line, "column "+strconv.Itoa(pe.Column), pe.Err.Error())
				if pe.Column <= 0 {
					e.Field = ""
				}
				return nil, nil, e
			}
			return nil, nil, readErr(s, err, "cannot read")
		}
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue // blank (or whitespace-only) line
		}
		line, _ := cr.FieldPos(0)
		if header == nil && rows == 0 && ncols == 0 {
			// Spreadsheets save UTF-8 CSV with a byte-order mark; left
			// in place it would make a numeric first row look like text.
			rec[0] = strings.TrimPrefix(rec[0], "\ufeff")
			ncols = len(rec)
			first := make([]string, len(rec))
			for i, f := range rec {
				first[i] = strings.TrimSpace(f)
			}
			if hint := sepHint(sep, first); ncols == 1 && hint != "" {
				return nil, nil, s.errf(line, "", "one column only"+hint)
			}
			// One rule with ReadTable's HeaderAuto: a header has no
			// numbers, a data row no text, and a mix is refused.
			isHeader, ierr := tableHeader(s, line, first)
			if ierr != nil {
				ierr.Msg += sepHint(sep, first)
				return nil, nil, ierr
			}
			if isHeader {
				header = first
				continue
			}
		}
		if rows == 0 {
			firstLine = line
		}
		if len(rec) != ncols {
			what := fmt.Sprintf("line %d", firstLine)
			if rows == 0 {
				what = "the header"
			}
			return nil, nil, s.errf(line, "", fmt.Sprintf("has %d columns, but %s has %d (ragged rows)", len(rec), what, ncols)+sepHint(sep, rec))
		}
		for j, f := range rec {
			v, err := parseCSVNumber(f)
			if err != nil {
				l, _ := cr.FieldPos(j)
				return nil, nil, s.errf(l, "column "+strconv.Itoa(j+1), err.Error()+sepHint(sep, []string{f}))
			}
			data = append(data, v)
		}
		// Numbers take four times the memory of their shortest text
		// ("1,"), so a compressed file is also bounded by what its
		// numbers take, not only by its text.
		if s.compressed > 0 && int64(len(data))*8 > decompressedLimit(s.compressed) {
			return nil, nil, bombError(s, s.compressed, fmt.Sprintf("holds over %d numbers (%s as float64),", len(data), fmtBytes(int64(len(data))*8)))
		}
		if int64(len(data)) > MaxDecodedBytes/8 {
			return nil, nil, s.errf(line, "", fmt.Sprintf("more than %d numbers, the limit of dataio.MaxDecodedBytes (%.1f GiB as float64)",
				MaxDecodedBytes/8, float64(MaxDecodedBytes)/(1<<30)))
		}
		rows++
	}
	if rows == 0 {
		if header != nil {
			return nil, nil, s.errf(0, "", "no data rows (only a header)")
		}
		return nil, nil, s.errf(0, "", "no data rows (empty file)")
	}
	return header, &Array{Shape: []int{rows, ncols}, Data: data}, nil
}

// parseCSVNumber parses one field and rejects what no consumer can use.
func parseCSVNumber(f string) (float64, error) {
	t := strings.TrimSpace(f)
	if t == "" {
		return 0, errors.New("is empty, want a number")
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) && math.IsInf(v, 0) {
			return 0, fmt.Errorf("%q overflows float64 (is %s)", clip(t, 40), fmtNonFinite(v))
		}
		if errors.Is(err, strconv.ErrRange) {
			return v, nil // underflow to a tiny value or zero is harmless
		}
		return 0, fmt.Errorf("%q is not a number", clip(t, 40))
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("is %s (text %q)", fmtNonFinite(v), t)
	}
	return v, nil
}

// clip shortens s for an error message.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "..."
}

// encodeCSV writes an optional header and rows of numbers in the shortest
// text that reads back to the same float64.
func encodeCSV(w io.Writer, header []string, rows [][]float64) error {
	width := -1
	if header != nil {
		width = len(header)
	}
	for i, r := range rows {
		if width < 0 {
			width = len(r)
		}
		if len(r) != width {
			return fmt.Errorf("CSV row %d has %d values, want %d", i, len(r), width)
		}
	}
	cw := csv.NewWriter(w)
	if header != nil {
		if err := cw.Write(header); err != nil {
			return err
		}
	}
	rec := make([]string, width)
	for _, r := range rows {
		for j, v := range r {
			rec[j] = strconv.FormatFloat(v, 'g', -1, 64)
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
