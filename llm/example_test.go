package llm_test

import (
	"context"
	"fmt"
	"log"
	"net/http/httptest"

	"github.com/genlens/genlens/internal/testkit/llmtest"
	"github.com/genlens/genlens/llm"
	"github.com/genlens/genlens/metric/hallucination/categorical"
)

// Draw four answers from a server that answers one choice a request, as
// llama.cpp server does: Sample asks again for the missing ones.
func ExampleClient_Sample() {
	h, err := llmtest.NewHandler(llmtest.Config{Model: categorical.Symmetric(1, 2, 1), Inputs: []string{"cat"}, Labels: []string{"yes", "no"}, MaxN: 1})
	if err != nil {
		log.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	c, err := llm.New(llm.Config{BaseURL: srv.URL + "/v1"})
	if err != nil {
		log.Fatal(err)
	}
	one, seed := 1.0, int64(1)
	answers, usage, err := c.Sample(context.Background(), llm.ChatRequest{
		Model:    "genlens-categorical",
		Messages: []llm.Message{{Role: "user", Content: "Input: cat\nLabel:"}},
		N:        4, Temperature: &one, MaxTokens: 1, Seed: &seed,
	}, 4)
	if err != nil {
		log.Fatal(err)
	}
	requests, _ := c.Stats()
	fmt.Println(len(answers), "answers from", requests, "requests,", usage.CompletionTokens, "tokens")
	// Output: 4 answers from 4 requests, 4 tokens
}
