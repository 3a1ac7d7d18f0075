package llm

// The wire model of the OpenAI API, as this package and every other
// speaker of it in genlens (the uncertainty proxy, the hallucination
// client, the fake server of package llmtest) read and write it.

// ErrorResponse is the body of an error answer:
// {"error": {"message", "type", "param", "code"}}, param and code null
// when not set, as OpenAI sends them.
type ErrorResponse struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail is the error of an ErrorResponse; Code is a string
// ("rate_limit_exceeded"), a number (an upstream's HTTP status) or null.
type ErrorDetail struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    any     `json:"code"`
}
