package fault_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/genlens/genlens/fault"
)

// kinded is an error of another package that declares its kind.
type kinded struct {
	k   fault.Kind
	err error
}

func (e *kinded) Error() string    { return "kinded" }
func (e *kinded) Kind() fault.Kind { return e.k }
func (e *kinded) Unwrap() error    { return e.err }

func TestClassify(t *testing.T) {
	field := fault.Fieldf("n", "{n} 0: want at least 1")
	input := &fault.InputError{File: "a.npy", Msg: "truncated"}
	for _, tc := range []struct {
		name string
		err  error
		want fault.Kind
	}{
		{"nil", nil, fault.KindInternal},
		{"plain", errors.New("disk full"), fault.KindInternal},
		{"field", field, fault.KindField},
		{"wrapped field", fmt.Errorf("compare: %w", field), fault.KindField},
		{"input", input, fault.KindInput},
		{"canceled", fmt.Errorf("reading: %w", context.Canceled), fault.KindCanceled},
		{"deadline", context.DeadlineExceeded, fault.KindCanceled},
		// The outermost declared kind decides: a panic that carried a
		// field error is still the program's failure.
		{"internal over field", &kinded{fault.KindInternal, field}, fault.KindInternal},
		{"input over cancel", &kinded{fault.KindInput, context.Canceled}, fault.KindInput},
	} {
		if got := fault.Classify(tc.err); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestStatusAndExitCode(t *testing.T) {
	for _, tc := range []struct {
		k            fault.Kind
		status, exit int
	}{{fault.KindInternal, 500, 1}, {fault.KindField, 400, 2}, {fault.KindInput, 422, 2}, {fault.KindCanceled, 499, 130}} {
		if tc.k.HTTPStatus() != tc.status || tc.k.ExitCode() != tc.exit {
			t.Errorf("%v: %d %d, want %d %d", tc.k, tc.k.HTTPStatus(), tc.k.ExitCode(), tc.status, tc.exit)
		}
	}
}

func TestPrintable(t *testing.T) {
	for _, tc := range []struct {
		in   string
		max  int
		want string
	}{
		{"plain text", 100, "plain text"},
		{"line\nbreak\r\ttab", 100, `line\nbreak\r\ttab`},
		{"esc \x1b[31mred", 100, `esc \x1b[31mred`},
		{"nul \x00", 100, `nul \x00`},
		{"bad \xff utf-8", 100, `bad \xff utf-8`},
		{"a real \uFFFD stays", 100, "a real \uFFFD stays"},
		{"evil\u202egnp.exe", 100, `evil\u202egnp.exe`},
		{"zero\u200bwidth and\u00a0nbsp", 100, `zero\u200bwidth and\u00a0nbsp`},
		{"µ−…, ünïcödé", 100, "µ−…, ünïcödé"},
		{"héllo wörld", 5, "héllo... (7 more bytes)"},
	} {
		if got := fault.Printable(tc.in, tc.max); got != tc.want {
			t.Errorf("Printable(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
		}
	}
	if got := fault.Printable(strings.Repeat("x", 10), 10); got != strings.Repeat("x", 10) {
		t.Errorf("exactly max runes cut: %q", got)
	}
}

func TestInputErrorRender(t *testing.T) {
	e := &fault.InputError{File: "x.npy", Line: 4, Field: "column 7", Msg: "is +Inf"}
	if got, want := e.Error(), "dataio: x.npy row 4, column 7: is +Inf"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
	e = &fault.InputError{File: "a.jsonl", Line: 17, Field: "{target}", Msg: "line\nbreak"}
	if got, want := e.Render(func(f string) string { return "--" + f }), `dataio: a.jsonl line 17: --target: line\nbreak`; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}
