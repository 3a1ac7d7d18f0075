// Package strictjson decodes the JSON bodies of requests strictly: one
// JSON document, no field the destination does not declare, nothing after
// it. A misspelt field must not be silently ignored, and a second
// document pasted after the first must not be half read.
//
// Its errors are *fault.FieldError (a 400 of the service, a usage error
// of the command line) that name the field at fault, or "body" for a
// fault of the document as a whole; an *http.MaxBytesError of the
// reader passes through as it is (a 413).
package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/genlens/genlens/fault"
)

// Body is the field named by errors about the document as a whole.
const Body = "body"

// Decode decodes the one JSON document of r into dst. The document is
// read whole first (encoding/json's decoder buffers a whole value
// anyway), so that an error can be traced back to its field.
func Decode(r io.Reader, dst any) error {
	data, err := io.ReadAll(r)
	if err != nil {
		if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
			return err
		}
		return fault.Fieldf(Body, "request body: %v", err)
	}
	return Unmarshal(data, dst)
}

// Unmarshal decodes the one JSON document of data into dst.
func Unmarshal(data []byte, dst any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return fieldError(err, data, dst)
	}
	if _, err := dec.Token(); err != io.EOF {
		return fault.Fieldf(Body, "request body: want one JSON document, found more after it")
	}
	return nil
}

// Error turns an error of encoding/json (of a lenient decode, which has
// no unknown fields to report) into a *fault.FieldError naming the field
// at fault when the decoder says which; nil passes unchanged.
func Error(err error) error {
	if err == nil {
		return nil
	}
	return fieldError(err, nil, nil)
}

// fieldError turns an error of encoding/json decoding data into dst into
// a *fault.FieldError naming the field at fault: the decoder's typed
// errors say which; an unknown field, which the decoder reports only in
// its text, is looked up in data.
func fieldError(err error, data []byte, dst any) error {
	var ute *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &ute):
		f := ute.Field
		if f == "" {
			f = Body
		}
		return fault.Fieldf(f, "{%s}: want a JSON %s, got %s", f, jsonType(ute.Type.Kind().String()), ute.Value)
	case errors.As(err, &se):
		return fault.Fieldf(Body, "request body: invalid JSON at byte %d: %v", se.Offset, err)
	case errors.Is(err, io.EOF):
		return fault.Fieldf(Body, "request body: empty; want a JSON document")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fault.Fieldf(Body, "request body: truncated JSON")
	}
	if name, ok := unknownField(data, dst); ok {
		return fault.Fieldf(name, "{%s}: unknown field", name)
	}
	// A field's own UnmarshalJSON, which may have named the field at
	// fault already (through this package), or an unknown key below the
	// top level.
	if fe := (*fault.FieldError)(nil); errors.As(err, &fe) {
		return fe
	}
	return fault.Fieldf(Body, "request body: %v", err)
}

// jsonType names a Go kind as JSON does.
func jsonType(kind string) string {
	switch {
	case strings.HasPrefix(kind, "int"), strings.HasPrefix(kind, "uint"), strings.HasPrefix(kind, "float"):
		return "number"
	case kind == "slice", kind == "array":
		return "array"
	case kind == "struct", kind == "map":
		return "object"
	}
	return kind
}
