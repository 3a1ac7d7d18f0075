package openai

import (
	"fmt"
	"strings"
)

// CompletionRequest is the body of POST /completions (the fields genlens
// uses of the OpenAI legacy completions API).
type CompletionRequest struct {
	Model       string   `json:"model"`
	Prompt      string   `json:"prompt"`
	MaxTokens   int      `json:"max_tokens"`
	Temperature float64  `json:"temperature"`
	TopP        float64  `json:"top_p"`
	N           int      `json:"n,omitempty"`
	Logprobs    *int     `json:"logprobs,omitempty"`
	Echo        bool     `json:"echo,omitempty"`
	Stop        []string `json:"stop,omitempty"`
	Seed        *int64   `json:"seed,omitempty"`
}

// CompletionResponse is the body of a successful completions response.
type CompletionResponse struct {
	ID      string   `json:"id"`
	Object  string   `json:"object"`
	Created int64    `json:"created"`
	Model   string   `json:"model"`
	Choices []Choice `json:"choices"`
	Usage   *Usage   `json:"usage,omitempty"`
}

// Choice is one generated completion.
type Choice struct {
	Index        int       `json:"index"`
	Text         string    `json:"text"`
	Logprobs     *Logprobs `json:"logprobs"`
	FinishReason string    `json:"finish_reason"`
}

// Logprobs are the token log-probabilities of a choice. TokenLogprobs[i]
// is null for a token without one (the first token of an echoed prompt);
// TextOffset[i] is the character offset of token i in the text.
type Logprobs struct {
	Tokens        []string             `json:"tokens"`
	TokenLogprobs []*float64           `json:"token_logprobs"`
	TopLogprobs   []map[string]float64 `json:"top_logprobs,omitempty"`
	TextOffset    []int                `json:"text_offset,omitempty"`
}

// Usage counts tokens.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// ErrorResponse is the body of an error response.
type ErrorResponse struct {
	Error struct {
		Message string `json:"message"`
		Type    string `json:"type,omitempty"`
		Code    any    `json:"code,omitempty"`
	} `json:"error"`
}

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
