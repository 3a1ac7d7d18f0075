package openai_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/genlens/genlens/internal/testkit/llmtest"
	"github.com/genlens/genlens/metric/hallucination"
	"github.com/genlens/genlens/metric/hallucination/categorical"
	"github.com/genlens/genlens/metric/hallucination/openai"
)

// Throughput of the OpenAI backend against the local server: one PHR
// estimate with the paper's LLM settings (M = 10, N-n = 5, K = 50, about
// 1100 requests) at client concurrency 1, 4 and 16, with the server
// answering at once and with 2 ms of simulated compute per request (a
// model server is latency-bound, not CPU-bound like this one).
// Run: go test ./hallucination/openai -run XXX -bench Throughput -count 3
func BenchmarkThroughput(b *testing.B) {
	m := categorical.Symmetric(3, 3, 0.5)
	r := rand.New(rand.NewPCG(1, 2))
	truth, _ := m.SampleTruth(r)
	d := named(truth.Data(r, 8))
	for _, latency := range []time.Duration{0, 2 * time.Millisecond} {
		for _, conc := range []int{1, 4, 16} {
			b.Run(fmt.Sprintf("latency=%v/concurrency=%d", latency, conc), func(b *testing.B) {
				h, err := llmtest.NewHandler(llmtest.Config{Model: m, Inputs: inputs, Labels: labels, Latency: latency})
				if err != nil {
					b.Fatal(err)
				}
				srv := httptest.NewServer(h)
				defer srv.Close()
				client, err := openai.New(openai.Config{BaseURL: srv.URL + "/v1", Model: "genlens-categorical", Concurrency: conc})
				if err != nil {
					b.Fatal(err)
				}
				opt := hallucination.LLMDefaults
				opt.Concurrency = conc
				start := time.Now()
				for b.Loop() {
					if _, err := hallucination.Estimate(context.Background(), client, d, inputs[0], opt); err != nil {
						b.Fatal(err)
					}
				}
				req, _ := client.Stats()
				b.ReportMetric(float64(req)/time.Since(start).Seconds(), "requests/s")
				b.ReportMetric(float64(req)/float64(b.N), "requests/op")
			})
		}
	}
}
