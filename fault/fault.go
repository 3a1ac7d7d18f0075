package fault

import (
	"context"
	"errors"
	"fmt"

	"github.com/genlens/genlens/internal/fields"
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

// Kind is KindField.
func (e *FieldError) Kind() Kind { return KindField }

// Kind is the class of an error, which decides the exit code and HTTP
// status.
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

// Kinded is an error that declares its kind: FieldError, InputError, and
// the errors of other packages that know theirs (a matrix over the
// memory budget is a bad input, a worker's panic is internal whatever it
// wraps).
type Kinded interface {
	error
	Kind() Kind
}

// Classify returns the kind of err (KindInternal for nil too): the kind
// the outermost Kinded error of its chain declares, else KindCanceled for
// a cancelled or timed-out context, else KindInternal.
func Classify(err error) Kind {
	var k Kinded
	switch {
	case err == nil:
		return KindInternal
	case errors.As(err, &k):
		return k.Kind()
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
