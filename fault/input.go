package fault

import (
	"path/filepath"
	"strconv"
	"strings"

	"github.com/genlens/genlens/internal/fields"
)

// InputError is bad user input: a file, or bytes a user brought, that
// cannot be read as what it should be (KindInput: exit 2, HTTP 422).
// The readers of package dataio report every problem with a file as one,
// so that "your file is wrong" is told from "the program failed" with
// errors.As alone.
type InputError struct {
	File  string // path as the user gave it
	Key   string // .npz member name; "" if not applicable
	Line  int    // 1-based line (text files) or row index+1 (arrays); 0 if not applicable
	Field string // e.g. "embeddings[2][5]", "samples", "column 3", "{target}" (a request field); "" if not applicable
	Msg   string
	Err   error // underlying cause, if any (e.g. fs.ErrNotExist); see Unwrap
}

// Error returns the error on one line, for example
//
//	dataio: answers.jsonl line 17: embeddings[2][5]: is NaN
//	dataio: x.npy row 4, column 7: is +Inf (index [3, 6])
//	dataio: x.npy: want a 2-D array, got shape (3, 4, 5)
func (e *InputError) Error() string { return e.Render(func(f string) string { return f }) }

// Render returns the error on one line as Error does, with the request
// fields the message names in braces ("{shape}": see package
// internal/fields) spelled by spell.
func (e *InputError) Render(spell func(field string) string) string {
	var b strings.Builder
	b.WriteString("dataio: ")
	if e.File != "" {
		b.WriteString(e.File)
	} else {
		b.WriteString("<input>")
	}
	if e.Key != "" {
		b.WriteString(" key ")
		b.WriteString(strconv.Quote(e.Key))
	}
	if e.Line > 0 {
		b.WriteString(" ")
		b.WriteString(LineUnit(e.File))
		b.WriteString(" ")
		b.WriteString(strconv.Itoa(e.Line))
	}
	if e.Field != "" {
		// "row 4, column 7" reads as one position; other fields are
		// separate path components.
		if e.Line > 0 && strings.HasPrefix(e.Field, "column ") {
			b.WriteString(", ")
		} else {
			b.WriteString(": ")
		}
		b.WriteString(Printable(fields.Render(e.Field, spell), 100))
	}
	b.WriteString(": ")
	b.WriteString(Printable(fields.Render(e.Msg, spell), maxMsgRunes))
	return b.String()
}

// maxMsgRunes bounds the message part of an InputError: a message that
// quotes a field of a file must not print a gigabyte to a terminal.
const maxMsgRunes = 500

// Unwrap returns the underlying cause, so errors.Is(err, fs.ErrNotExist)
// works for a missing file.
func (e *InputError) Unwrap() error { return e.Err }

// LineUnit says "row" for binary array and table formats, whose Line is a
// row index + 1, and "line" for text formats, whose Line is a line number.
func LineUnit(file string) string {
	switch strings.ToLower(filepath.Ext(strings.TrimSuffix(strings.ToLower(file), ".gz"))) {
	case ".npy", ".npz", ".parquet":
		return "row"
	}
	return "line"
}

// Kind is KindInput.
func (e *InputError) Kind() Kind { return KindInput }
