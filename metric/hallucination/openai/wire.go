package openai

import (
	"fmt"
	"strings"
)

// Prompt-format markers of the paper's Appendix E.2.
const (
	inputTag = "Input:"
	labelTag = "Label:"
)

// FormatExample returns the prompt text of one context example:
// "Input: <x>\nLabel: <y>\n\n".
func FormatExample(x, y string) string {
	return inputTag + " " + x + "\n" + labelTag + " " + y + "\n\n"
}

// FormatQuery returns the prompt text of a query: "Input: <x>\nLabel:".
func FormatQuery(x string) string { return inputTag + " " + x + "\n" + labelTag }

// FormatError reports text that the prompt format cannot hold: an input
// or a label that would end an example early or read back as something
// else. Callers that read examples from a file turn it into an error on
// the file's line (Field says which of the pair is at fault).
type FormatError struct {
	Field string // "x" (the input) or "y" (the label)
	Msg   string // e.g. `label "a\nb" spans several lines`
}

func (e *FormatError) Error() string { return "openai: " + e.Msg }

// CheckExample reports whether (x, y) can be written in the prompt format
// and read back: y must be one non-empty line and x must not contain the
// line "Label:" or a blank line, which would end the example early. The
// error is a *FormatError.
func CheckExample(x, y string) error {
	if err := CheckInput(x); err != nil {
		return err
	}
	switch {
	case strings.TrimSpace(y) == "":
		return &FormatError{Field: "y", Msg: "empty label"}
	case strings.ContainsAny(y, "\n\r"):
		return &FormatError{Field: "y", Msg: fmt.Sprintf("label %q spans several lines", abbreviate(y, 60))}
	}
	return nil
}

// CheckInput reports whether x can be written as a query. The error is a
// *FormatError.
func CheckInput(x string) error {
	switch {
	case strings.TrimSpace(x) == "":
		return &FormatError{Field: "x", Msg: "empty input"}
	case strings.Contains(x, "\n"+labelTag) || strings.Contains(x, "\n\n"):
		return &FormatError{Field: "x", Msg: fmt.Sprintf("input %q contains a blank line or a line starting with %q, which the prompt format reserves", abbreviate(x, 60), labelTag)}
	}
	return nil
}

// ParsePair reads an imagined example from text generated after "Input:":
// " <x>\nLabel: <y>" followed by anything after the end of the label's
// line. It returns false when the text does not have that shape.
func ParsePair(text string) (x, y string, ok bool) {
	i := strings.Index(text, "\n"+labelTag)
	if i < 0 {
		return "", "", false
	}
	x = strings.TrimSpace(text[:i])
	rest := text[i+1+len(labelTag):]
	if j := strings.IndexByte(rest, '\n'); j >= 0 {
		rest = rest[:j]
	}
	y = strings.TrimSpace(rest)
	if x == "" || y == "" || strings.Contains(x, "\n\n") {
		return "", "", false
	}
	return x, y, true
}

func abbreviate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "..."
}
