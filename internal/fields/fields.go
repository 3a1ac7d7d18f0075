// Package fields renders messages that name request fields in braces,
// "{chunk_size}", so that each transport spells a field its own way: the
// service and the library as the field itself ("chunk_size"), the command
// line as its flag ("--chunk-size"). The layers below the command line
// (job, the method packages, dataio) write such messages and never a
// flag; fault.FieldError, fault.InputError and Error carry them.
package fields

import (
	"errors"
	"fmt"
	"regexp"
)

var braced = regexp.MustCompile(`\{([A-Za-z0-9_]+)\}`)

// Render returns msg with each braced field spelled by spell.
func Render(msg string, spell func(field string) string) string {
	return braced.ReplaceAllStringFunc(msg, func(m string) string {
		return spell(m[1 : len(m)-1])
	})
}

// Plain returns msg with each braced field spelled as itself.
func Plain(msg string) string {
	return Render(msg, func(f string) string { return f })
}

// Error is an error whose message names request fields in braces: one
// that is neither a bad request field nor a bad input file (a missing
// download, say) but whose remedy is a field.
type Error struct {
	Msg string // fields in braces
	Err error  // the cause, if any
}

// Errorf returns an *Error with a formatted message; a %w verb wraps its
// operand as the cause. An operand that names fields itself (a Renderer:
// *Error, a bad request field or input file) keeps them in braces, so
// that the message renders them as its own.
func Errorf(format string, a ...any) *Error {
	braced := make([]any, len(a))
	for i, v := range a {
		braced[i] = v
		if r, ok := v.(Renderer); ok {
			braced[i] = bracedError{r}
		}
	}
	return &Error{Msg: fmt.Errorf(format, braced...).Error(), Err: errors.Unwrap(fmt.Errorf(format, a...))}
}

// Renderer is an error whose message names request fields, each spelled
// by spell.
type Renderer interface {
	error
	Render(spell func(field string) string) string
}

// bracedError is r with its fields in braces, as they are in messages.
type bracedError struct{ r Renderer }

func (b bracedError) Error() string {
	return b.r.Render(func(f string) string { return "{" + f + "}" })
}

// Error renders the message with plain field names.
func (e *Error) Error() string { return Plain(e.Msg) }

// Render renders the message, spelling each braced field with spell.
func (e *Error) Render(spell func(field string) string) string { return Render(e.Msg, spell) }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }
