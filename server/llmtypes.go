package server

import (
	"context"
	"encoding/json"
)

// The request and answer types of a Sampler, field for field those of
// package llm's client (llm.ChatRequest, llm.Choice, llm.Usage), so that
// an *llm.Client is a Sampler as it is.

// ChatMessage is one message of a chat.
type ChatMessage struct{ Role, Content string }

// ChatRequest asks for N choices of a chat completion.
type ChatRequest struct {
	Model       string
	Messages    []ChatMessage
	N           int
	Temperature *float64
	TopP        *float64
	MaxTokens   int
	Seed        *int64
	Extra       map[string]json.RawMessage // further request fields, sent as they are
}

// Choice is one sampled answer.
type Choice struct {
	Text         string
	FinishReason string
}

// Usage counts tokens.
type Usage struct{ PromptTokens, CompletionTokens, TotalTokens int }

// Sampler draws the proxy's samples from the upstream: n choices of req,
// asking again for the missing ones when the server returns fewer.
type Sampler interface {
	Sample(ctx context.Context, req ChatRequest, n int) ([]Choice, Usage, error)
}
