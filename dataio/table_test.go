package dataio

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/genlens/genlens/fault"
)

func writeTemp(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReadTable(t *testing.T) {
	p := writeTemp(t, "ops.csv", "\ufeffts, price ,pred\n# a comment\n2026-01-02,1.5,1\n\n2026-01-03 10:00, ,2\n1767225600,3,\"3\"\n")
	tb, err := ReadTable(p, HeaderAuto)
	if err != nil {
		t.Fatal(err)
	}
	if tb.Rows() != 3 || tb.Cols() != 3 {
		t.Fatalf("got %d×%d, want 3×3", tb.Rows(), tb.Cols())
	}
	if got := strings.Join(tb.Header, "|"); got != "ts|price|pred" {
		t.Errorf("header %q", got)
	}
	if tb.Line(0) != 3 || tb.Line(1) != 5 || tb.Line(2) != 6 {
		t.Errorf("lines %d %d %d, want 3 5 6", tb.Line(0), tb.Line(1), tb.Line(2))
	}
	j, err := tb.Column("price")
	if err != nil || j != 1 {
		t.Fatalf("Column(price) = %d, %v", j, err)
	}
	y, err := tb.Floats(j, true)
	if err != nil {
		t.Fatal(err)
	}
	if y[0] != 1.5 || !math.IsNaN(y[1]) || y[2] != 3 {
		t.Errorf("Floats = %v, want [1.5 NaN 3]", y)
	}
	if _, err := tb.Floats(j, false); err == nil || !strings.Contains(err.Error(), `ops.csv line 5, column "price": is empty`) {
		t.Errorf("empty cell without allowMissing: %v", err)
	}
	ts, err := tb.Times(0)
	if err != nil {
		t.Fatal(err)
	}
	want := []time.Time{
		time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 1, 3, 10, 0, 0, 0, time.UTC),
		time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
	}
	for i := range want {
		if !ts[i].Equal(want[i]) {
			t.Errorf("Times[%d] = %v, want %v", i, ts[i], want[i])
		}
	}
	x, err := tb.Matrix([]int{2, 0})
	if err == nil {
		t.Fatalf("Matrix over a timestamp column: want an error, got %v", x)
	}
	x, err = tb.Matrix([]int{2})
	if err != nil || x.At(2, 0) != 3 {
		t.Fatalf("Matrix([2]) = %v, %v", x, err)
	}
}

func TestReadTableHeaderless(t *testing.T) {
	p := writeTemp(t, "h.csv", "1,,3\n4,5,6\n")
	tb, err := ReadTable(p, HeaderAuto)
	if err != nil {
		t.Fatal(err)
	}
	if tb.Header != nil || tb.Rows() != 2 {
		t.Fatalf("header %v rows %d: an empty first-row cell must not make a header", tb.Header, tb.Rows())
	}
	if j, err := tb.Column("2"); err != nil || j != 2 || tb.Name(j) != "2" {
		t.Errorf("Column(2) = %d, %v", j, err)
	}
	for _, spec := range []string{"3", "-1", "price"} {
		if _, err := tb.Column(spec); err == nil {
			t.Errorf("Column(%q): want an error", spec)
		}
	}
}

// TestReadTableAutoFS: the first row decides when it can; an ambiguous
// one is read as the caller says.
func TestReadTableAutoFS(t *testing.T) {
	fsys := fstest.MapFS{
		"log.csv":  {Data: []byte("2026-01-01T00:00:00Z,1,2\n2026-01-02T00:00:00Z,3,4\n")},
		"head.csv": {Data: []byte("ts,a,b\n2026-01-01T00:00:00Z,1,2\n")},
	}
	tb, err := ReadTableAutoFS(fsys, "log.csv", HeaderAbsent)
	if err != nil || tb.Header != nil || tb.Rows() != 2 {
		t.Errorf("ambiguous, read without a header: %v, %v", tb, err)
	}
	tb, err = ReadTableAutoFS(fsys, "log.csv", HeaderPresent)
	if err != nil || tb.Header == nil || tb.Rows() != 1 {
		t.Errorf("ambiguous, read with a header: %v, %v", tb, err)
	}
	tb, err = ReadTableAutoFS(fsys, "head.csv", HeaderAbsent)
	if err != nil || tb.Header == nil || tb.Rows() != 1 {
		t.Errorf("a clear header: %v, %v", tb, err)
	}
	if _, err := ReadTableAutoFS(fsys, "log.csv", HeaderAuto); !errors.Is(err, ErrAmbiguousHeader) {
		t.Errorf("no fallback: %v", err)
	}
}

func TestReadTableErrors(t *testing.T) {
	tests := []struct {
		name, content, want string
	}{
		{"empty", "", "no data rows (empty file)"},
		{"header only", "a,b\n", "no data rows (only a header)"},
		{"ragged", "a,b\n1,2\n3\n", "line 3: has 1 fields, the first row has 2"},
		{"duplicate header", "a,b,a\n1,2,3\n", `line 1: column name "a" appears twice`},
		{"bad quote", "a,b\n1,\"2\n", "line 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadTable(writeTemp(t, "t.csv", tt.content), HeaderAuto)
			var ie *fault.InputError
			if !errors.As(err, &ie) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want an InputError containing %q", err, tt.want)
			}
		})
	}
}

func TestTableCellErrors(t *testing.T) {
	tb, err := ReadTable(writeTemp(t, "c.csv", "a,b,ts\n1,x,2026-01-01\n2,NaN,yesterday\n"), HeaderAuto)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		run  func() error
		want string
	}{
		{"not a number", func() error { _, err := tb.Floats(1, false); return err }, `line 2, column "b": "x" is not a number`},
		{"not a timestamp", func() error { _, err := tb.Times(2); return err }, `line 3, column "ts": "yesterday" is not a timestamp`},
		{"unknown column", func() error { _, err := tb.Column("c"); return err }, `no column "c" (columns: a, b, ts)`},
		{"no columns", func() error { _, err := tb.Matrix(nil); return err }, "no columns selected"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.run(); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want %q", err, tt.want)
			}
		})
	}
	tb2, err := ReadTable(writeTemp(t, "n.csv", "a\n1\nNaN\n"), HeaderAuto)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tb2.Floats(0, true); err == nil || !strings.Contains(err.Error(), "line 3") || !strings.Contains(err.Error(), "NaN") {
		t.Errorf("a NaN cell must be an error even when missing values are allowed: %v", err)
	}
}

func TestReadTableHeaderModes(t *testing.T) {
	logNoHeader := writeTemp(t, "log.csv", "2026-01-02,0.5,1\n2026-01-03,0.7,2\n")
	numericNames := writeTemp(t, "years.csv", "region,2019,2020\nnorth,1,2\n")
	typo := writeTemp(t, "typo.csv", "1.5,abc,3\n4,5,6\n")
	for _, p := range []string{logNoHeader, numericNames, typo} {
		_, err := ReadTable(p, HeaderAuto)
		if !errors.Is(err, ErrAmbiguousHeader) || !strings.Contains(err.Error(), "line 1") {
			t.Errorf("%s, HeaderAuto: %v, want an ambiguous-header error on line 1", filepath.Base(p), err)
		}
	}
	tb, err := ReadTable(logNoHeader, HeaderAbsent)
	if err != nil || tb.Header != nil || tb.Rows() != 2 {
		t.Fatalf("HeaderAbsent: %v, %v", tb, err)
	}
	if ts, err := tb.Times(0); err != nil || ts[1].Day() != 3 {
		t.Errorf("timestamps of a header-less log: %v, %v", ts, err)
	}
	tb, err = ReadTable(numericNames, HeaderPresent)
	if err != nil || tb.Rows() != 1 {
		t.Fatalf("HeaderPresent: %v, %v", tb, err)
	}
	if j, err := tb.Column("2019"); err != nil || j != 1 {
		t.Errorf("a numeric header name must resolve as a name first: %d, %v", j, err)
	}
	if _, err := ReadTable(writeTemp(t, "h.csv", "a,b\n"), HeaderAbsent); err != nil {
		t.Errorf("HeaderAbsent with a text row is data, not an error: %v", err)
	}
}
