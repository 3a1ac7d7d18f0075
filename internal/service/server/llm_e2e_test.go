package server_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"

	"github.com/genlens/genlens/internal/service/server"
	"github.com/genlens/genlens/internal/testkit/dbtest"
	"github.com/genlens/genlens/internal/testkit/llmtest"
	"github.com/genlens/genlens/llm"
	"github.com/genlens/genlens/metric/hallucination/categorical"
)

// recordingSampler is an llm.Client that keeps the samples it drew.
type recordingSampler struct {
	c       *llm.Client
	mu      sync.Mutex
	samples [][]string
}

func (r *recordingSampler) Sample(ctx context.Context, req llm.ChatRequest, n int) ([]llm.Choice, llm.Usage, error) {
	cs, u, err := r.c.Sample(ctx, req, n)
	if err == nil {
		texts := make([]string, len(cs))
		for i, c := range cs {
			texts[i] = c.Text
		}
		r.mu.Lock()
		r.samples = append(r.samples, texts)
		r.mu.Unlock()
	}
	return cs, u, err
}

// End to end with package llm's client against the OpenAI-compatible
// test server (a real conditional generative model) that answers one
// choice per request, as llama.cpp server does: the proxy tops the
// samples up to k, and the uncertainty it returns is the kernel entropy
// of exactly the samples it drew.
func TestLLMProxyEndToEnd(t *testing.T) {
	h, err := llmtest.NewHandler(llmtest.Config{Model: categorical.Symmetric(1, 3, 1), Inputs: []string{"cat"},
		Labels: []string{"yes", "no", "maybe"}, MaxN: 1, APIKey: "sk-upstream"})
	if err != nil {
		t.Fatal(err)
	}
	up := httptest.NewServer(h)
	t.Cleanup(up.Close)
	c, err := llm.New(llm.Config{BaseURL: up.URL + "/v1", APIKey: "sk-upstream", MaxRetries: 2})
	if err != nil {
		t.Fatal(err)
	}
	rs := &recordingSampler{c: c}
	ts := newTestServer(t, dbtest.SQLite(t), server.Options{Token: "genlens-token-for-tests",
		LLM: server.LLMOptions{Client: c, Samples: 6, Sampler: rs}})
	body := `{"model":"genlens-categorical","messages":[{"role":"user","content":"Input: cat\nLabel: yes\n\nInput: cat\nLabel:"}],"max_tokens":1,"temperature":0}`
	for i := range 3 {
		resp, b := post(t, ts.URL, "genlens-token-for-tests", body)
		if resp.StatusCode != 200 {
			t.Fatalf("%d %s", resp.StatusCode, b)
		}
		var a struct {
			Choices []struct{ Message struct{ Content string } }
			Genlens struct {
				Uncertainty float64
				Samples     int
			}
		}
		if err := json.Unmarshal(b, &a); err != nil || len(a.Choices) != 1 {
			t.Fatalf("%v: %s", err, b)
		}
		rs.mu.Lock()
		drawn := rs.samples[i]
		rs.mu.Unlock()
		if len(drawn) != 6 {
			t.Fatalf("%d samples drawn, want 6", len(drawn))
		}
		want := kernelEntropyOf(t, drawn)
		if a.Genlens.Uncertainty != want || a.Genlens.Samples != 6 || resp.Header.Get("X-Genlens-Uncertainty") != strconv.FormatFloat(want, 'g', -1, 64) {
			t.Errorf("request %d: uncertainty %v, want %v, the kernel entropy of the samples %q", i, a.Genlens.Uncertainty, want, drawn)
		}
		if a.Choices[0].Message.Content != " yes" { // greedy: the label seen is the most probable
			t.Errorf("greedy answer %q", a.Choices[0].Message.Content)
		}
	}
	// One pass-through and six one-choice sample requests per call.
	if n := h.Requests(); n != 3*(1+6) {
		t.Errorf("%d upstream requests, want %d", n, 3*7)
	}
}
