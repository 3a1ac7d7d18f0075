package llm

// The wire model of the OpenAI API, as this package and every other
// speaker of it in genlens (the uncertainty proxy, the hallucination
// client, the fake server of package llmtest) read and write it: one
// declaration of each shape.

// CompletionBody is the body of POST /completions as a typed value: the
// fields genlens sends to the legacy completions API when it wants token
// log-probabilities (CompletionRequest builds the body of a plain one).
type CompletionBody struct {
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

// CompletionResponse is the body of a successful POST /completions.
type CompletionResponse struct {
	ID      string             `json:"id"`
	Object  string             `json:"object"`
	Created int64              `json:"created"`
	Model   string             `json:"model"`
	Choices []CompletionChoice `json:"choices"`
	Usage   *Usage             `json:"usage,omitempty"`
}

// CompletionChoice is one generated completion.
type CompletionChoice struct {
	Index        int       `json:"index"`
	Text         string    `json:"text"`
	Logprobs     *Logprobs `json:"logprobs"`
	FinishReason string    `json:"finish_reason"`
}

// Logprobs are the token log-probabilities of a completion choice.
// TokenLogprobs[i] is null for a token without one (the first token of an
// echoed prompt); TextOffset[i] is the character offset of token i in the
// text.
type Logprobs struct {
	Tokens        []string             `json:"tokens"`
	TokenLogprobs []*float64           `json:"token_logprobs"`
	TopLogprobs   []map[string]float64 `json:"top_logprobs,omitempty"`
	TextOffset    []int                `json:"text_offset,omitempty"`
}

// ChatCompletion is the body of a successful POST /chat/completions.
type ChatCompletion struct {
	ID      string       `json:"id"`
	Object  string       `json:"object"`
	Created int64        `json:"created"`
	Model   string       `json:"model"`
	Choices []ChatChoice `json:"choices"`
	Usage   *Usage       `json:"usage,omitempty"`
}

// ChatChoice is one generated chat answer.
type ChatChoice struct {
	Index        int           `json:"index"`
	Message      ChatMessage   `json:"message"`
	Logprobs     *ChatLogprobs `json:"logprobs,omitempty"`
	FinishReason string        `json:"finish_reason"`
}

// ChatMessage is the message of a chat answer; Content is null for an
// answer that is only tool calls.
type ChatMessage struct {
	Role    string  `json:"role"`
	Content *string `json:"content"`
}

// ChatChunk is one event of a streamed chat completion (the JSON after
// "data: "); the stream ends with "data: [DONE]".
type ChatChunk struct {
	ID      string        `json:"id"`
	Object  string        `json:"object"`
	Created int64         `json:"created"`
	Model   string        `json:"model"`
	Choices []ChunkChoice `json:"choices"`
}

// ChunkChoice is a choice's part of a ChatChunk.
type ChunkChoice struct {
	Index        int         `json:"index"`
	Delta        ChatMessage `json:"delta"`
	FinishReason *string     `json:"finish_reason"`
}

// EmbeddingsResponse is the body of a successful POST /embeddings.
type EmbeddingsResponse struct {
	Object string      `json:"object"`
	Data   []Embedding `json:"data"`
	Model  string      `json:"model"`
	Usage  *Usage      `json:"usage"`
}

// Embedding is one vector of an EmbeddingsResponse; Index is the input's
// (a server may answer out of order, or leave it out).
type Embedding struct {
	Object    string    `json:"object"`
	Index     *int      `json:"index"`
	Embedding []float64 `json:"embedding"`
}

// ErrorResponse is the body of an error answer:
// {"error": {"message", "type", "param", "code"}}. Error is nil when the
// body has no "error" object.
type ErrorResponse struct {
	Error *ErrorDetail `json:"error"`
}

// ErrorDetail is the error of an ErrorResponse; param and code are null
// when not set, as OpenAI sends them; Code is a string
// ("rate_limit_exceeded"), a number (an upstream's HTTP status) or nil.
type ErrorDetail struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    any     `json:"code"`
}

// ChatLogprobs are the token log-probabilities of a chat choice
// (choices[].logprobs when the request asked for "logprobs": true).
type ChatLogprobs struct {
	Content []ChatTokenLogprob `json:"content"`
}

// ChatTokenLogprob is one token of a chat answer with its log-probability
// and, when "top_logprobs" was asked, the most likely alternatives.
type ChatTokenLogprob struct {
	Token       string       `json:"token"`
	Logprob     float64      `json:"logprob"`
	Bytes       []int        `json:"bytes,omitempty"`
	TopLogprobs []TopLogprob `json:"top_logprobs"`
}

// TopLogprob is one alternative of a ChatTokenLogprob.
type TopLogprob struct {
	Token   string  `json:"token"`
	Logprob float64 `json:"logprob"`
	Bytes   []int   `json:"bytes,omitempty"`
}
