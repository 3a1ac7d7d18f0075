package dataio

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"genlens/internal/fields"
)

// InputError is bad user input. The CLI maps it to exit code 2.
//
// Every reader in this package reports problems with the bytes a user
// brought as an *InputError, so the CLI can tell "your file is wrong"
// (exit 2) from "the program failed" (exit 1) with errors.As alone.
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
		b.WriteString(lineUnit(e.File))
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
		b.WriteString(printable(fields.Render(e.Field, spell), 100))
	}
	b.WriteString(": ")
	b.WriteString(printable(fields.Render(e.Msg, spell), maxMsgRunes))
	return b.String()
}

// maxMsgRunes bounds the message part of an InputError: a message that
// quotes a field of a file must not print a gigabyte to a terminal.
const maxMsgRunes = 500

// printable keeps a message on one line and harmless for a terminal
// whatever bytes a file or a server smuggled in: control characters
// (newlines, NUL, escape sequences) and invalid UTF-8 are escaped, and
// the result is cut at max runes.
func printable(msg string, max int) string {
	var b strings.Builder
	n := 0
	for i, r := range msg {
		if n == max {
			b.WriteString(fmt.Sprintf("... (%d more bytes)", len(msg)-i))
			break
		}
		n++
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(msg[i:], "\uFFFD"):
			b.WriteString(fmt.Sprintf(`\x%02x`, msg[i]))
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case unicode.IsControl(r):
			b.WriteString(strings.Trim(strconv.QuoteRune(r), "'"))
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Cause returns the message of err, a failure to open or read a file,
// without the path that an *fs.PathError repeats (an InputError names the
// file already).
func Cause(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// Unwrap returns the underlying cause, so errors.Is(err, fs.ErrNotExist)
// works for a missing file.
func (e *InputError) Unwrap() error { return e.Err }

// lineUnit says "row" for binary array and table formats, whose Line is a
// row index + 1, and "line" for text formats, whose Line is a line number.
func lineUnit(file string) string {
	switch strings.ToLower(filepath.Ext(strings.TrimSuffix(strings.ToLower(file), ".gz"))) {
	case ".npy", ".npz", ".parquet":
		return "row"
	}
	return "line"
}

// src names the file (and .npz member) that errors are about.
type src struct {
	file string
	key  string
	// stream is set when the bytes come through a decompressor (gzip, a
	// zip member), whose read errors mean a corrupt file, not an I/O
	// failure.
	stream bool
	// ranks, when not nil, are the array ranks the caller accepts: a
	// binary reader checks them from the header, before the payload.
	ranks []int
	// compressed is the compressed size of a stream's source (the .gz
	// file, the zip member), 0 when unknown or not compressed: a header
	// declaring more than decompressedLimit(compressed) is refused.
	compressed int64
}

func (s src) errf(line int, field, msg string) *InputError {
	return &InputError{File: s.file, Key: s.key, Line: line, Field: field, Msg: msg}
}
