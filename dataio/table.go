package dataio

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/genlens/genlens/fault"
	"gonum.org/v1/gonum/mat"
)

// Table is a CSV file read as text cells, for tables that are not a
// numeric matrix: production logs with a timestamp column, targets whose
// labels have not arrived yet (empty cells), columns picked by name.
// ReadCSV is the reader for all-numeric files.
//
// Cells are parsed on demand by column (Floats, Matrix, Times), and every
// parse error names the file, the line and the column.
type Table struct {
	File   string   // path as given to ReadTable
	Header []string // column names; nil when the file has none
	rows   [][]string
	lines  []int // 1-based line of every data row
}

// Header says whether the first non-blank row of a table is a header.
type Header int

const (
	// HeaderAuto decides from the row: a header when none of its
	// non-empty fields is a number, data when all are numbers. A row
	// that mixes the two is ambiguous (a header-less log whose first
	// column is a timestamp, or a header with numeric names, or data
	// with a typo) and is an error wrapping ErrAmbiguousHeader.
	HeaderAuto Header = iota
	// HeaderPresent: the first row is a header.
	HeaderPresent
	// HeaderAbsent: the first row is data; columns are known by index.
	HeaderAbsent
)

// ErrAmbiguousHeader is wrapped by the error ReadTable returns when
// HeaderAuto cannot tell whether the first row is a header.
var ErrAmbiguousHeader = errors.New("cannot tell whether the first row is a header")

// ReadTable reads a CSV file whose cells are kept as text. Blank lines and
// lines starting with '#' are skipped, fields are trimmed, a leading UTF-8
// byte-order mark (Excel) is dropped and a ".csv.gz" file is decompressed
// on the fly. h says how to treat the first row. Every row must have the
// first row's number of fields, header names must be distinct, and there
// must be at least one data row.
func ReadTable(path string, h Header) (*Table, error) {
	return ReadTableFS(HostFS, path, h)
}

// ReadTableFS is ReadTable on the file name in fsys.
func ReadTableFS(fsys fs.FS, path string, h Header) (*Table, error) {
	return ReadTableSepFS(fsys, path, h, ',')
}

// ReadTableSepFS is ReadTableFS on a file whose fields are separated by
// sep (see ParseSep; 0 is the comma).
func ReadTableSepFS(fsys fs.FS, path string, h Header, sep rune) (*Table, error) {
	_, gz := fileExt(path)
	r, _, closeFn, err := openInput(fsys, path, gz)
	if err != nil {
		return nil, err
	}
	defer closeFn()
	return decodeTable(src{file: path, stream: gz}, r, h, sep)
}

// ReadTableAutoFS reads a table whose first row decides, as HeaderAuto
// does, whether it is a header, and reads a first row that cannot decide
// (a header-less log starting with a timestamp) as ambiguous says. A
// reader of new data that must match an earlier file passes the way that
// file was read.
func ReadTableAutoFS(fsys fs.FS, path string, ambiguous Header) (*Table, error) {
	return ReadTableAutoSepFS(fsys, path, ambiguous, ',')
}

// ReadTableAutoSepFS is ReadTableAutoFS on a file whose fields are
// separated by sep (see ParseSep; 0 is the comma).
func ReadTableAutoSepFS(fsys fs.FS, path string, ambiguous Header, sep rune) (*Table, error) {
	t, err := ReadTableSepFS(fsys, path, HeaderAuto, sep)
	if errors.Is(err, ErrAmbiguousHeader) && ambiguous != HeaderAuto {
		return ReadTableSepFS(fsys, path, ambiguous, sep)
	}
	return t, err
}

// decodeTable does the work of ReadTable on any reader, with fields
// separated by sep (0: the comma).
func decodeTable(s src, r io.Reader, h Header, sep rune) (*Table, error) {
	sep = sepOf(sep)
	cr := newCSVReader(r, sep)
	t := &Table{File: s.file}
	width := -1
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return nil, s.errf(pe.Line, "", pe.Err.Error())
			}
			return nil, readErr(s, err, "cannot read")
		}
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		line, _ := cr.FieldPos(0)
		if width < 0 {
			rec[0] = strings.TrimPrefix(rec[0], "\ufeff")
		}
		for i := range rec {
			rec[i] = strings.TrimSpace(rec[i])
		}
		if width < 0 {
			width = len(rec)
			// A table has columns to choose from: one column holding
			// another separator is a file read with the wrong one.
			if hint := sepHint(sep, rec); width == 1 && hint != "" {
				return nil, s.errf(line, "", "one column only"+hint)
			}
			isHeader := h == HeaderPresent
			if h == HeaderAuto {
				var err *fault.InputError
				if isHeader, err = tableHeader(s, line, rec); err != nil {
					err.Msg += sepHint(sep, rec)
					return nil, err
				}
			}
			if isHeader {
				seen := make(map[string]bool, len(rec))
				for _, h := range rec {
					if seen[h] {
						return nil, s.errf(line, "", fmt.Sprintf("column name %q appears twice in the header", clip(h, 40)))
					}
					seen[h] = true
				}
				t.Header = rec
				continue
			}
		}
		if len(rec) != width {
			return nil, s.errf(line, "", fmt.Sprintf("has %d fields, the first row has %d (ragged rows)", len(rec), width)+sepHint(sep, rec))
		}
		t.rows = append(t.rows, rec)
		t.lines = append(t.lines, line)
	}
	if len(t.rows) == 0 {
		if t.Header != nil {
			return nil, s.errf(0, "", "no data rows (only a header)")
		}
		return nil, s.errf(0, "", "no data rows (empty file)")
	}
	return t, nil
}

// tableHeader decides for HeaderAuto whether the first row rec (at line)
// is a header: yes when no non-empty field is a number, no when every
// non-empty field is (an empty cell is a missing value in a data row), and
// an error naming one field of each kind otherwise.
func tableHeader(s src, line int, rec []string) (bool, *fault.InputError) {
	num, text := -1, -1
	for j, f := range rec {
		if f == "" {
			continue
		}
		if _, err := strconv.ParseFloat(f, 64); err != nil && !errors.Is(err, strconv.ErrRange) {
			if text < 0 {
				text = j
			}
		} else if num < 0 {
			num = j
		}
	}
	if text >= 0 && num >= 0 {
		e := s.errf(line, "", fmt.Sprintf("%v: column %d is text (%q) but column %d is a number (%q); say whether the file has a header",
			ErrAmbiguousHeader, text, clip(rec[text], 40), num, clip(rec[num], 40)))
		e.Err = ErrAmbiguousHeader
		return false, e
	}
	return text >= 0, nil
}

// Rows returns the number of data rows.
func (t *Table) Rows() int { return len(t.rows) }

// Cols returns the number of columns.
func (t *Table) Cols() int { return len(t.rows[0]) }

// Line returns the 1-based line of data row i in the file.
func (t *Table) Line(i int) int { return t.lines[i] }

// Cell returns the trimmed text of row i, column j.
func (t *Table) Cell(i, j int) string { return t.rows[i][j] }

// Name returns column j's header name, or its 0-based index as text when
// the file has no header.
func (t *Table) Name(j int) string {
	if t.Header != nil {
		return t.Header[j]
	}
	return strconv.Itoa(j)
}

// Field returns how errors name column j: by name (`column "price"`), or
// by 0-based index without a header (`column index 3`), the way columns
// are chosen, so it cannot be mistaken for ReadCSV's 1-based numbering.
func (t *Table) Field(j int) string {
	if t.Header != nil {
		return fmt.Sprintf("column %q", t.Header[j])
	}
	return fmt.Sprintf("column index %d", j)
}

// Column resolves a column given by header name or, failing that, by
// 0-based index.
func (t *Table) Column(spec string) (int, error) {
	spec = strings.TrimSpace(spec)
	if i := slices.Index(t.Header, spec); i >= 0 {
		return i, nil
	}
	if i, err := strconv.Atoi(spec); err == nil {
		if i < 0 || i >= t.Cols() {
			return 0, &fault.InputError{File: t.File, Msg: fmt.Sprintf("column index %d out of range (the file has %d columns)", i, t.Cols())}
		}
		return i, nil
	}
	if t.Header == nil {
		return 0, &fault.InputError{File: t.File, Msg: fmt.Sprintf("column %q: the file has no header row; give a 0-based column index", clip(spec, 40))}
	}
	return 0, &fault.InputError{File: t.File, Msg: fmt.Sprintf("no column %q (columns: %s)", clip(spec, 40), strings.Join(t.Header, ", "))}
}

// Floats parses column j as finite numbers. An empty cell is an error,
// or NaN when allowMissing is set (a label that has not arrived); a cell
// that spells NaN or infinity is always an error, so that a missing value
// is never confused with a broken one.
func (t *Table) Floats(j int, allowMissing bool) ([]float64, error) {
	out := make([]float64, len(t.rows))
	for i, row := range t.rows {
		c := row[j]
		if c == "" {
			if allowMissing {
				out[i] = math.NaN()
				continue
			}
			return nil, t.cellErr(i, j, "is empty, want a number")
		}
		v, err := strconv.ParseFloat(c, 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return nil, t.cellErr(i, j, fmt.Sprintf("%q is not a number", clip(c, 40)))
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			msg := fmt.Sprintf("is %s (text %q)", fmtNonFinite(v), clip(c, 40))
			if allowMissing {
				msg += "; leave the cell empty for a missing value"
			}
			return nil, t.cellErr(i, j, msg)
		}
		out[i] = v
	}
	return out, nil
}

// Matrix parses the given columns, in that order, as a numeric matrix with
// one row per data row; no cell may be empty.
func (t *Table) Matrix(cols []int) (*mat.Dense, error) {
	if len(cols) == 0 {
		return nil, &fault.InputError{File: t.File, Msg: "no columns selected"}
	}
	x := mat.NewDense(len(t.rows), len(cols), nil)
	for k, j := range cols {
		v, err := t.Floats(j, false)
		if err != nil {
			return nil, err
		}
		x.SetCol(k, v)
	}
	return x, nil
}

// timeLayouts are the timestamp spellings Times accepts besides Unix
// seconds; a time without a zone is UTC.
var timeLayouts = []string{time.RFC3339Nano, "2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05.999999999", "2006-01-02 15:04", "2006-01-02"}

// Times parses column j as timestamps: RFC 3339, "2006-01-02 15:04:05"
// (with or without the T, seconds optional), "2006-01-02", or Unix seconds
// (integer or fractional).
func (t *Table) Times(j int) ([]time.Time, error) {
	out := make([]time.Time, len(t.rows))
	for i, row := range t.rows {
		c := row[j]
		ok := false
		for _, l := range timeLayouts {
			if v, err := time.Parse(l, c); err == nil {
				out[i], ok = v, true
				break
			}
		}
		if !ok {
			// Unix seconds; the bound (year 5138) keeps a stray large
			// number from passing for a date.
			if v, err := strconv.ParseFloat(c, 64); err == nil && !math.IsNaN(v) && math.Abs(v) < 1e11 {
				sec, frac := math.Modf(v)
				out[i], ok = time.Unix(int64(sec), int64(frac*1e9)).UTC(), true
			}
		}
		if !ok {
			return nil, t.cellErr(i, j, fmt.Sprintf("%q is not a timestamp (want RFC 3339, 2006-01-02[ 15:04[:05]] or Unix seconds)", clip(c, 40)))
		}
	}
	return out, nil
}

func (t *Table) cellErr(i, j int, msg string) *fault.InputError {
	return &fault.InputError{File: t.File, Line: t.lines[i], Field: t.Field(j), Msg: msg}
}
