package openai_test

import (
	"context"
	"fmt"
	"net/http/httptest"

	"github.com/genlens/genlens/internal/testkit/llmtest"
	"github.com/genlens/genlens/metric/hallucination"
	"github.com/genlens/genlens/metric/hallucination/categorical"
	"github.com/genlens/genlens/metric/hallucination/openai"
)

// The PHR of a model behind an OpenAI-compatible completions server. Here
// the server is llmtest's exact classifier on 127.0.0.1; with vLLM it
// would be, e.g., BaseURL "http://127.0.0.1:8000/v1" and
// Model "meta-llama/Llama-2-7b-hf".
func ExampleClient() {
	h, _ := llmtest.NewHandler(llmtest.Config{
		Model: categorical.Symmetric(2, 2, 0.5), Inputs: []string{"the film is a charmer", "the plot follows a spy"}, Labels: []string{"subjective", "objective"},
	})
	srv := httptest.NewServer(h)
	defer srv.Close()

	client, err := openai.New(openai.Config{BaseURL: srv.URL + "/v1", Model: "genlens-categorical"})
	if err != nil {
		fmt.Println(err)
		return
	}
	examples := []openai.Example{
		{X: "the film is a charmer", Y: "subjective"},
		{X: "the plot follows a spy", Y: "objective"},
		{X: "the film is a charmer", Y: "subjective"},
	}
	res, err := hallucination.Estimate(context.Background(), client, examples, "the film is a charmer", hallucination.LLMDefaults)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("PHR %.3f, error rate %.2f\n", res.PHR, hallucination.ErrorRate(res.Responses, "subjective"))
	// Output: PHR 0.000, error rate 0.14
}
