package job

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"genlens/dataio"
	"genlens/internal/fields"
	"genlens/internal/par"
	"genlens/membudget"
)

// FieldError reports a bad request field: a value out of range, a missing
// required field, a combination that does not apply. It is the command
// line's usage error (exit 2) and the service's 400.
//
// Msg names fields in braces, {chunk_size}, so that each transport spells
// them its own way (package internal/fields): Error gives "chunk_size",
// the command line renders its flag. A field keeps the case of its JSON
// name: {M}.
type FieldError struct {
	Field string // the request field at fault, e.g. "chunk_size"
	Msg   string // the message, fields in braces
}

// Fieldf returns a *FieldError for field with a formatted message.
func Fieldf(field, format string, a ...any) *FieldError {
	return &FieldError{Field: field, Msg: fmt.Sprintf(format, a...)}
}

// Error renders the message with request field names.
func (e *FieldError) Error() string { return fields.Plain(e.Msg) }

// Render renders the message, spelling each braced field with spell.
func (e *FieldError) Render(spell func(field string) string) string {
	return fields.Render(e.Msg, spell)
}

// Kind is the class of an error, which decides the exit code and HTTP
// status (see the package documentation).
type Kind int

const (
	KindInternal Kind = iota // a failure of genlens or its environment
	KindField                // a bad request field or flag
	KindInput                // a bad input file
	KindCanceled             // the context was cancelled or timed out
)

func (k Kind) String() string {
	switch k {
	case KindField:
		return "field"
	case KindInput:
		return "input"
	case KindCanceled:
		return "canceled"
	}
	return "internal"
}

// Classify returns the kind of err (KindInternal for nil too). A panic
// turned into an error by a worker pool is internal, whatever it wraps.
// An input whose shape asks for a matrix over the memory budget
// (*membudget.Error) is a bad input: too large for this process.
func Classify(err error) Kind {
	var pe *par.PanicError
	var fe *FieldError
	var ie *dataio.InputError
	var be *membudget.Error
	switch {
	case err == nil, errors.As(err, &pe):
		return KindInternal
	case errors.As(err, &fe):
		return KindField
	case errors.As(err, &ie), errors.As(err, &be):
		return KindInput
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return KindCanceled
	}
	return KindInternal
}

// ExitCode is the command line's exit status for an error of kind k.
func (k Kind) ExitCode() int {
	switch k {
	case KindField, KindInput:
		return 2
	case KindCanceled:
		return 130 // as a shell reports a command stopped by Ctrl-C
	}
	return 1
}

// HTTPStatus is the service's response status for an error of kind k.
func (k Kind) HTTPStatus() int {
	switch k {
	case KindField:
		return 400
	case KindInput:
		return 422
	case KindCanceled:
		return 499 // client closed request: no standard code fits
	}
	return 500
}

// withDefault adds to a field error of Validate on a field that req
// leaves at its zero value, where def (the NewXRequest defaults) sets it,
// which default to use: a request built as a zero value rather than from
// its constructor is told what it lacks. Other errors pass unchanged.
func WithDefault[R any](err error, req *R, def R) error {
	var fe *FieldError
	if err == nil || !errors.As(err, &fe) {
		return err
	}
	got, want := jsonField(req, fe.Field), jsonField(&def, fe.Field)
	if zeroJSON(got) && !zeroJSON(want) {
		fe.Msg += fmt.Sprintf(" (the default is %s)", strings.Trim(string(want), `"`))
	}
	return err
}

// jsonField returns the JSON value of a field of v, nil when absent.
func jsonField(v any, field string) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil {
		return nil
	}
	return m[field]
}

// zeroJSON reports whether a JSON value is absent or a zero value.
func zeroJSON(v json.RawMessage) bool {
	switch string(v) {
	case "", "null", `""`, "0", "false", "[]", "{}":
		return true
	}
	return false
}
