package dataio

import (
	"path/filepath"
	"strconv"
	"strings"
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
	Field string // e.g. "embeddings[2][5]", "samples", "column 3"; "" if not applicable
	Msg   string
	Err   error // underlying cause, if any (e.g. fs.ErrNotExist); see Unwrap
}

// Error returns the error on one line, for example
//
//	dataio: answers.jsonl line 17: embeddings[2][5]: is NaN
//	dataio: x.npy row 4, column 7: is +Inf (index [3, 6])
//	dataio: x.npy: want a 2-D array, got shape (3, 4, 5)
func (e *InputError) Error() string {
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
		b.WriteString(e.Field)
	}
	b.WriteString(": ")
	// Keep the message on one line whatever text a file smuggled in.
	b.WriteString(strings.NewReplacer("\n", `\n`, "\r", `\r`).Replace(e.Msg))
	return b.String()
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
}

func (s src) errf(line int, field, msg string) *InputError {
	return &InputError{File: s.file, Key: s.key, Line: line, Field: field, Msg: msg}
}
