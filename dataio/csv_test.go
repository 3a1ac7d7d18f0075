package dataio

import (
	"bytes"
	"compress/gzip"
	"errors"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/genlens/genlens/fault"
)

func TestCSVRoundTrip(t *testing.T) {
	dir := t.TempDir()
	rows := [][]float64{{1, -2.5, math.Pi}, {1e-300, 0, 6.02214076e23}}
	for _, header := range [][]string{nil, {"a", "b c", `q"uote`}} {
		p := filepath.Join(dir, "t.csv")
		if err := WriteCSV(p, header, rows); err != nil {
			t.Fatal(err)
		}
		gotHeader, a, err := ReadCSV(p)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(gotHeader, header) {
			t.Errorf("header %q, want %q", gotHeader, header)
		}
		if !reflect.DeepEqual(a.Shape, []int{2, 3}) || !reflect.DeepEqual(a.Data, []float64{1, -2.5, math.Pi, 1e-300, 0, 6.02214076e23}) {
			t.Errorf("got %v %v", a.Shape, a.Data)
		}
	}
}

func TestDecodeCSV(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		header []string
		shape  []int
		data   []float64
	}{
		{"no header", "1,2\n3,4\n", nil, []int{2, 2}, []float64{1, 2, 3, 4}},
		{"header", "x,y\n1,2\n", []string{"x", "y"}, []int{1, 2}, []float64{1, 2}},
		{"byte-order mark before numbers", "\ufeff1,2\n3,4\n", nil, []int{2, 2}, []float64{1, 2, 3, 4}},
		{"byte-order mark before a header", "\ufeffx,y\n1,2\n", []string{"x", "y"}, []int{1, 2}, []float64{1, 2}},
		{"pandas index header", ",a\n0,2.5\n", []string{"", "a"}, []int{1, 2}, []float64{0, 2.5}},
		{"blank lines, CRLF, spaces, quotes", "\n a , b\r\n\r\n 1 , \"2\"\r\n   \n3,4e-2\n\n", []string{"a", "b"}, []int{2, 2}, []float64{1, 2, 3, 0.04}},
		{"savetxt comment header", "# a,b\n1,2\n", nil, []int{1, 2}, []float64{1, 2}},
		{"one column", "5\n6\n7", nil, []int{3, 1}, []float64{5, 6, 7}},
		{"underflow is fine", "1e-400\n", nil, []int{1, 1}, []float64{0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, a, err := decodeCSVComma(src{file: "t.csv"}, strings.NewReader(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(h, tt.header) || !reflect.DeepEqual(a.Shape, tt.shape) || !reflect.DeepEqual(a.Data, tt.data) {
				t.Errorf("got %q %v %v, want %q %v %v", h, a.Shape, a.Data, tt.header, tt.shape, tt.data)
			}
		})
	}
}

func TestDecodeCSVErrors(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		line  int
		field string
		want  string
	}{
		{"not a number", "a,b\n1,2\n3,x7\n", 3, "column 2", `x.csv line 3, column 2: "x7" is not a number`},
		{"NaN", "1,2\n3,4\n\n5,nan\n", 4, "column 2", "line 4, column 2: is NaN"},
		{"Inf", "inf,1\n", 1, "column 1", "line 1, column 1: is +Inf"},
		{"-Inf", "1,2\n-Infinity,1\n", 2, "column 1", "is -Inf"},
		{"overflow", "1\n1e999\n", 2, "column 1", `"1e999" overflows float64`},
		{"empty field", "1,2,3\n4,,6\n", 2, "column 2", "is empty"},
		{"ragged", "a,b,c\n1,2,3\n\n4,5\n", 4, "", "line 4: has 2 columns, but line 2 has 3 (ragged rows)"},
		{"ragged vs header", "a,b,c\n1,2\n", 2, "", "but the header has 3"},
		{"ragged long", "1,2\n3,4,5\n", 2, "", "has 3 columns"},
		{"bare quote", "1,2\n3,4\"x\n", 2, "column 4", "bare \""},
		{"empty file", "", 0, "", "x.csv: no data rows (empty file)"},
		{"blank only", "\n  \n\n", 0, "", "empty file"},
		{"header only", "a,b\n", 0, "", "only a header"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := decodeCSVComma(src{file: "x.csv"}, strings.NewReader(tt.in))
			ie := wantInputError(t, err, tt.want, "x.csv")
			if ie.Line != tt.line || ie.Field != tt.field {
				t.Errorf("Line, Field = %d, %q; want %d, %q", ie.Line, ie.Field, tt.line, tt.field)
			}
		})
	}
}

func TestReadCSVGzip(t *testing.T) {
	dir := t.TempDir()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write([]byte("1,2\n3,4\n"))
	zw.Close()
	p := writeFile(t, dir, "d.csv.gz", b.Bytes())
	a, err := ReadArray(p, ReadOptions{})
	if err != nil || !reflect.DeepEqual(a.Data, []float64{1, 2, 3, 4}) {
		t.Errorf("got %v, %v", a, err)
	}
	m, err := ReadMatrix(p, ReadOptions{})
	if err != nil || m.At(1, 0) != 3 {
		t.Errorf("ReadMatrix: %v", err)
	}
}

// A first row that mixes numbers and text is refused, as ReadTable's
// HeaderAuto refuses it: taking it as a header would silently drop a data
// row whose text cell is a typo, taking it as data fails later anyway.
func TestDecodeCSVAmbiguousFirstRow(t *testing.T) {
	_, _, err := decodeCSVComma(src{file: "t.csv"}, strings.NewReader("1,y\n1,2\n"))
	if !errors.Is(err, ErrAmbiguousHeader) {
		t.Fatalf("err = %v, want ErrAmbiguousHeader", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "t.csv line 1") || strings.Contains(msg, "\n") {
		t.Errorf("message %q: want one line naming file and line", msg)
	}
}

// Messages quote what files hold; they must stay one short line that a
// terminal shows as text.
func TestInputErrorPrintable(t *testing.T) {
	long := strings.Repeat("9", 1<<20)
	for _, c := range []struct {
		msg, want string
	}{
		{"a\nb\rc\td", `a\nb\rc\td`},
		{"nul \x00 esc \x1b[31m", `nul \x00 esc \x1b[31m`},
		{"bad utf8 \xff end", `bad utf8 \xff end`},
		{"replacement \uFFFD kept", "replacement \uFFFD kept"},
	} {
		got := (&fault.InputError{File: "f.csv", Line: 3, Msg: c.msg}).Error()
		if want := "dataio: f.csv line 3: " + c.want; got != want {
			t.Errorf("Error() = %q, want %q", got, want)
		}
	}
	got := (&fault.InputError{File: "f.csv", Msg: long}).Error()
	if len(got) > 600 || !strings.HasSuffix(got, "(1048076 more bytes)") {
		t.Errorf("a 1 MB message printed as %d bytes ending %q", len(got), got[len(got)-30:])
	}
	// Through a reader: a 1 MB field that overflows float64.
	_, _, err := decodeCSVComma(src{file: "t.csv"}, strings.NewReader("1e9"+long+"\n"))
	if err == nil || len(err.Error()) > 600 {
		t.Errorf("overflowing 1 MB field: %d-byte message", len(err.Error()))
	}
}

func TestDecodeCSVLimit(t *testing.T) {
	defer func(old int64) { MaxDecodedBytes = old }(MaxDecodedBytes)
	MaxDecodedBytes = 8 * 5
	_, _, err := decodeCSVComma(src{file: "t.csv.gz", stream: true}, strings.NewReader("1,2\n3,4\n5,6\n"))
	if err == nil || !strings.Contains(err.Error(), "t.csv.gz line 3: more than 5 numbers") {
		t.Fatalf("got %v", err)
	}
}
