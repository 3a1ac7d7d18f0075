package server

import (
	"context"

	"genlens/llm"
)

// Sampler draws the proxy's samples from the upstream: n choices of req,
// asking again for the missing ones when the server returns fewer. An
// *llm.Client is one; tests substitute their own.
type Sampler interface {
	Sample(ctx context.Context, req llm.ChatRequest, n int) ([]llm.Choice, llm.Usage, error)
}
