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

	"genlens/fault"
)

// Body is the field named by errors about the document as a whole.
const Body = "body"

// Decode decodes the one JSON document of r into dst.
func Decode(r io.Reader, dst any) error {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return Error(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
			return err
		}
		return fault.Fieldf(Body, "request body: want one JSON document, found more after it")
	}
	return nil
}

// Unmarshal is Decode of data.
func Unmarshal(data []byte, dst any) error { return Decode(bytes.NewReader(data), dst) }

// Error turns an error of encoding/json into a *fault.FieldError naming
// the field at fault when the decoder says which; an
// *http.MaxBytesError and nil pass unchanged.
func Error(err error) error {
	var mbe *http.MaxBytesError
	var ute *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case err == nil, errors.As(err, &mbe):
		return err
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
	// encoding/json reports an unknown field (DisallowUnknownFields) with
	// no error type of its own, as `json: unknown field "NAME"` since Go
	// 1.10; should that change, the error stays a 400 naming the body.
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		name = strings.Trim(name, `"`)
		return fault.Fieldf(name, "{%s}: unknown field", name)
	}
	return fault.Fieldf(Body, "request body: %s", strings.TrimPrefix(msg, "json: "))
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
