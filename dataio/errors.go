package dataio

import (
	"errors"
	"io/fs"

	"github.com/genlens/genlens/fault"
)

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

func (s src) errf(line int, field, msg string) *fault.InputError {
	return &fault.InputError{File: s.file, Key: s.key, Line: line, Field: field, Msg: msg}
}
