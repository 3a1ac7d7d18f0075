package dataio

import (
	"encoding/csv"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// ParseSep parses the field separator of a CSV file as a request gives
// it: "" is the comma; otherwise one character, or "tab" (also "\t"
// written out). The separator cannot be a quote, a line break or '#',
// which starts a comment line. The error names the request field {sep}.
func ParseSep(s string) (rune, error) {
	switch s {
	case "":
		return ',', nil
	case "tab", `\t`:
		return '\t', nil
	}
	r, size := utf8.DecodeRuneInString(s)
	switch {
	case size != len(s) || r == utf8.RuneError:
		return 0, fmt.Errorf("{sep} %q: want one character (such as ; or |) or tab", s)
	case r == '"' || r == '\r' || r == '\n' || r == '#' || r == 0xFEFF:
		return 0, fmt.Errorf("{sep} %q cannot separate CSV fields (a quote, a line break or the comment character #)", s)
	}
	return r, nil
}

// newCSVReader reads the CSV files of genlens from r: fields separated
// by sep, leading spaces trimmed, lines starting with '#' skipped, and
// rows of any length (the caller checks them, with a better message).
func newCSVReader(r io.Reader, sep rune) *csv.Reader {
	cr := csv.NewReader(r)
	cr.Comma = sep
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	cr.Comment = '#'
	return cr
}

// sepOf is the separator a reader uses for sep, the ReadOptions' field.
func sepOf(sep rune) rune {
	if sep == 0 {
		return ','
	}
	return sep
}

func sepName(r rune) string {
	if r == '\t' {
		return "a tab"
	}
	return fmt.Sprintf("'%c'", r)
}

// sepCandidates are the separators a file read with the comma is checked
// for when it does not parse: a spreadsheet in a locale with decimal
// commas saves CSV with ';', other tools with tabs or '|'.
var sepCandidates = []rune{';', '\t', '|', ','}

// sepHint returns, for a file read with separator sep whose record rec
// did not parse (a single column, ragged rows, a field that is no
// number), what the separator looks like instead and how to say so: ""
// when rec gives no sign of another separator.
func sepHint(sep rune, rec []string) string {
	for _, c := range sepCandidates {
		if c == sep {
			continue
		}
		for _, f := range rec {
			if strings.ContainsRune(f, c) {
				name := fmt.Sprintf("'%c'", c)
				set := "set {sep} " + name
				switch c {
				case '\t':
					name, set = "a tab", "set {sep} tab"
				case ',':
					set = "leave {sep} unset"
				}
				return fmt.Sprintf("; the separator looks like %s, not %s: %s", name, sepName(sep), set)
			}
		}
	}
	return ""
}
