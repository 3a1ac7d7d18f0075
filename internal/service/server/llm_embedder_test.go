package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/service/llmproxy"
	"github.com/genlens/genlens/internal/service/server"
	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/job/llmjob"
)

const e5Fixture = "../../../network/bert/testdata/e5"

// With --llm-embedder the proxy's uncertainty is what `genlens entropy
// --embedder e5-small-v2 --weights DIR --kernel rbf` reports for the same
// samples: their embeddings computed in process, no /embeddings call.
func TestLLMProxyEmbedder(t *testing.T) {
	ts, up, _ := newProxy(t, server.Options{LLM: server.LLMOptions{Embedder: "e5-small-v2", Weights: e5Fixture}})
	resp, b := post(t, ts.URL, "", chatBody)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	var a struct{ Genlens struct{ Uncertainty float64 } }
	if err := json.Unmarshal(b, &a); err != nil {
		t.Fatal(err)
	}

	samples := make([]string, llmproxy.DefaultSamples)
	for i := range samples {
		samples[i] = tinySamples[i%len(tinySamples)]
	}
	row, _ := json.Marshal(map[string]any{"id": "p", "samples": samples})
	in := filepath.Join(t.TempDir(), "in.jsonl")
	if err := os.WriteFile(in, append(row, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	req := llmjob.NewEntropyRequest()
	req.In, req.Scores, req.Kernel, req.Embedder, req.Weights = in, "kernel-entropy", "rbf", "e5-small-v2", e5Fixture
	res, err := llmjob.Entropy(context.Background(), job.CLIEnv(nil, nil), req)
	if err != nil {
		t.Fatal(err)
	}
	want := float64(*res.Items[0].Score("kernel_entropy"))
	if math.Abs(a.Genlens.Uncertainty-want) > 1e-9 {
		t.Errorf("uncertainty %v, entropy --embedder gives %v", a.Genlens.Uncertainty, want)
	}
	up.mu.Lock()
	for _, r := range up.reqs {
		if r.URL.Path == "/v1/embeddings" {
			t.Error("the upstream's /embeddings was called")
		}
	}
	up.mu.Unlock()
}

func TestLLMOptionsEmbedder(t *testing.T) {
	for _, tc := range []struct {
		field string
		o     server.LLMOptions
	}{
		{"llm_embedder", server.LLMOptions{Embedder: "nope", Weights: e5Fixture}},
		{"llm_weights", server.LLMOptions{Embedder: "e5-small-v2"}},
		{"llm_weights", server.LLMOptions{Weights: e5Fixture}},
		{"llm_score", server.LLMOptions{Embedder: "e5-small-v2", Weights: e5Fixture, Score: "no-embeddings"}},
	} {
		o := tc.o
		o.Upstream = "http://127.0.0.1:1/v1"
		o.EnsureDefaults()
		var fe *fault.FieldError
		if err := o.Validate(); !errors.As(err, &fe) || fe.Field != tc.field {
			t.Errorf("%+v: err = %v, want a field error on %s", tc.o, err, tc.field)
		}
	}
}
