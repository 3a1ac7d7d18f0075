package fields

import (
	"errors"
	"io/fs"
	"strings"
	"testing"
)

func TestRender(t *testing.T) {
	flag := func(f string) string { return "--" + strings.ReplaceAll(f, "_", "-") }
	for _, c := range []struct{ msg, plain, flags string }{
		{"{chunk_size} 0: want at least 1", "chunk_size 0: want at least 1", "--chunk-size 0: want at least 1"},
		{"raise {K} and {M}", "raise K and M", "raise --K and --M"},
		{`not a field: {"id": 1}, {} or { x }`, `not a field: {"id": 1}, {} or { x }`, `not a field: {"id": 1}, {} or { x }`},
	} {
		if got := Plain(c.msg); got != c.plain {
			t.Errorf("Plain(%q) = %q, want %q", c.msg, got, c.plain)
		}
		if got := Render(c.msg, flag); got != c.flags {
			t.Errorf("Render(%q) = %q, want %q", c.msg, got, c.flags)
		}
	}
}

func TestErrorf(t *testing.T) {
	err := Errorf("no weights: %w; pass {weights} PATH", fs.ErrNotExist)
	if err.Error() != "no weights: file does not exist; pass weights PATH" {
		t.Errorf("Error() = %q", err.Error())
	}
	if got := err.Render(func(f string) string { return "--" + f }); got != "no weights: file does not exist; pass --weights PATH" {
		t.Errorf("Render = %q", got)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		t.Error("the cause is not wrapped")
	}
}

func TestErrorfKeepsWrappedFields(t *testing.T) {
	inner := Errorf("{pools_key} names no array")
	err := Errorf("pool %d: %w", 2, inner)
	if got := err.Render(func(f string) string { return "--" + f }); got != "pool 2: --pools_key names no array" {
		t.Errorf("Render = %q", got)
	}
	if err.Error() != "pool 2: pools_key names no array" || !errors.Is(err, inner) {
		t.Errorf("Error() = %q, cause %v", err.Error(), err.Err)
	}
}
