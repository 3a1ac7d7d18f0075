package llm

import "fmt"

// What a token may take in an answer's JSON, to bound a response before
// it is read. OpenAI's chat shape writes a token's log-probability as
// {"token": " Hello", "logprob": -0.31725305, "bytes": [32, 72, 101,
// 108, 108, 111], "top_logprobs": [...]} and each alternative the same
// without top_logprobs: about 65 bytes for a six-letter token, and a
// server that writes every digit of a float64 (-9.5367431640625e-07)
// or escapes its tokens writes more. With 20 alternatives a token
// takes about 1.3 KB; it is priced at 2.7 KB.
const (
	// TokenBytes is a token of an answer's text: a few characters,
	// escaped.
	TokenBytes = 32
	// LogprobBytes is a token's log-probability entry, alternatives
	// aside.
	LogprobBytes = 160
	// TopLogprobBytes is each alternative of a token (top_logprobs).
	TopLogprobBytes = 128
	// AnswerOverhead is what an answer holds besides its choices: ids,
	// usage, the envelope of each choice.
	AnswerOverhead = 1 << 20
)

// AnswerBytes is the bytes an answer of n choices of at most maxTokens
// tokens may take: TokenBytes a token, plus LogprobBytes and
// topLogprobs × TopLogprobBytes a token when logprobs are asked, plus
// AnswerOverhead. It saturates rather than overflows.
func AnswerBytes(n, maxTokens int, logprobs bool, topLogprobs int) int64 {
	perToken := int64(TokenBytes)
	if logprobs {
		perToken += LogprobBytes + int64(max(topLogprobs, 0))*TopLogprobBytes
	}
	const most = 1 << 62
	tokens := int64(max(n, 0)) * int64(max(maxTokens, 0))
	if tokens > 0 && perToken > (most-AnswerOverhead)/tokens {
		return most
	}
	return tokens*perToken + AnswerOverhead
}

// SizeError is a response over its bound of bytes: one response over
// Limit, or, in Sample, the responses for one prompt together, when the
// earlier responses (Responses of them, Earlier bytes, bringing Choices of
// the N asked) leave less room than the next one takes.
type SizeError struct {
	Where string // "POST http://host/v1/chat/completions"
	Limit int64
	// Sample only: what the earlier responses held.
	Earlier               int64
	Responses, Choices, N int
}

func (e *SizeError) Error() string {
	if e.Responses == 0 {
		return fmt.Sprintf("llm: %s: response larger than %d bytes", e.Where, e.Limit)
	}
	return fmt.Sprintf("llm: %s: the answers for one prompt take more than their bound of %d bytes: %d responses took %d bytes and brought %d of the %d choices asked, and the next one does not fit in what is left",
		e.Where, e.Limit, e.Responses, e.Earlier, e.Choices, e.N)
}
