package dataio

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/genlens/genlens/fault"
)

func decodeCSVComma(s src, r io.Reader) ([]string, *Array, error) { return decodeCSV(s, r, 0) }

func decodeTableComma(s src, r io.Reader, h Header) (*Table, error) { return decodeTable(s, r, h, 0) }

// A CSV file separated by ';' (a spreadsheet in a locale with decimal
// commas), a tab or '|' and read with the comma says what its separator
// looks like and names the field that sets it; read with that separator
// it gives the numbers.
func TestSeparatorHintAndSep(t *testing.T) {
	fsys := fstest.MapFS{
		"semi.csv":    {Data: []byte("a;b;c\n1;2;3\n4;5;6\n")},
		"semi_nh.csv": {Data: []byte("1;2;3\n4;5;6\n")},
		"decimal.csv": {Data: []byte("x;y\n1,5;2,25\n3,0;4,5\n")},
		"tab.csv":     {Data: []byte("a\tb\n1\t2\n")},
		"comma.csv":   {Data: []byte("a,b\n1,2\n")},
	}
	for _, tc := range []struct {
		file, want string
	}{
		{"semi.csv", "the separator looks like ';', not ',': set {sep} ';'"},
		{"semi_nh.csv", "the separator looks like ';', not ','"},
		{"decimal.csv", "the separator looks like ';'"},
		{"tab.csv", "the separator looks like a tab, not ',': set {sep} tab"},
	} {
		_, err := ReadArrayFS(fsys, tc.file, ReadOptions{})
		_, terr := ReadTableFS(fsys, tc.file, HeaderAuto)
		for _, e := range []error{err, terr} {
			var ie *fault.InputError
			if !errors.As(e, &ie) || !strings.Contains(ie.Msg, tc.want) {
				t.Errorf("%s: %v, want an InputError with %q", tc.file, e, tc.want)
			}
		}
	}
	a, err := ReadArrayFS(fsys, "semi.csv", ReadOptions{Sep: ';'})
	if err != nil || a.Shape[0] != 2 || a.Shape[1] != 3 || a.Data[5] != 6 {
		t.Errorf("semi.csv with ';': %v, %v", a, err)
	}
	h, a, err := ReadCSVSepFS(fsys, "tab.csv", '\t')
	if err != nil || len(h) != 2 || a.Data[1] != 2 {
		t.Errorf("tab.csv with tab: %v %v %v", h, a, err)
	}
	tb, err := ReadTableAutoSepFS(fsys, "semi.csv", HeaderPresent, ';')
	if err != nil || tb.Cols() != 3 || tb.Cell(1, 2) != "6" {
		t.Errorf("table semi.csv with ';': %v", err)
	}
	// A comma file read with ';' says so the other way round.
	if _, err := ReadArrayFS(fsys, "comma.csv", ReadOptions{Sep: ';'}); err == nil || !strings.Contains(err.Error(), "looks like ',', not ';': leave sep unset") {
		t.Errorf("comma.csv read with ';': %v", err)
	}
	// A file that parses says nothing of separators.
	if _, err := ReadArrayFS(fsys, "comma.csv", ReadOptions{}); err != nil {
		t.Error(err)
	}
	for _, tc := range []struct {
		in   string
		want rune
		bad  bool
	}{{"", ',', false}, {";", ';', false}, {"tab", '\t', false}, {`\t`, '\t', false}, {"|", '|', false},
		{";;", 0, true}, {`"`, 0, true}, {"#", 0, true}, {"\n", 0, true}} {
		r, err := ParseSep(tc.in)
		if (err != nil) != tc.bad || (!tc.bad && r != tc.want) {
			t.Errorf("ParseSep(%q) = %q, %v", tc.in, r, err)
		}
		if err != nil && !strings.Contains(err.Error(), "{sep}") {
			t.Errorf("ParseSep(%q): %v does not name {sep}", tc.in, err)
		}
	}
}
