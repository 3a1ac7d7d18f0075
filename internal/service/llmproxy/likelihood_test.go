package llmproxy_test

import (
	"context"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/genlens/genlens/internal/service/llmproxy"
	"github.com/genlens/genlens/llm"
)

// tokenSampler answers each sample with one token of the given logprob
// (none when logprobs is nil) and keeps the requests it got.
type tokenSampler struct {
	mu       sync.Mutex
	logprobs []float64
	reqs     []llm.ChatRequest
}

func (s *tokenSampler) Sample(ctx context.Context, req llm.ChatRequest, n int) ([]llm.Choice, llm.Usage, error) {
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	s.mu.Unlock()
	out := make([]llm.Choice, n)
	for i := range out {
		out[i].Text = "Paris"
		if s.logprobs != nil {
			lp := s.logprobs[i%len(s.logprobs)]
			out[i].Tokens = []llm.TokenLogprob{{Token: "Paris", Logprob: lp}, {Token: ".", Logprob: lp}}
		}
	}
	return out, llm.Usage{}, nil
}

// pe and ne come from the logprobs of the proxy's own samples, asked of
// the upstream for them alone; the caller's request passes as it came.
func TestProxyLikelihoodScores(t *testing.T) {
	body := `{"model":"tiny","messages":[{"role":"user","content":"Capital of France?"}]}`
	for _, tc := range []struct {
		score    string
		logprobs []float64
		want     float64 // NaN: unavailable
	}{
		// Samples of two tokens, log p = 2·lp: pe = −mean 2·lp, ne = −mean lp.
		{"pe", []float64{-0.5, -1}, 1.5},
		{"ne", []float64{-0.5, -1}, 0.75},
		{"pe", nil, math.NaN()},
	} {
		s := &tokenSampler{logprobs: tc.logprobs}
		p, up := newTestProxy(t, llmproxy.Options{Sampler: s, Samples: 4, Score: tc.score})
		out := callProxy(t, p, body)
		if math.IsNaN(tc.want) {
			if out.Genlens.Uncertainty != nil || !strings.Contains(out.Genlens.Error, "sent no logprobs") || out.header != "" {
				t.Errorf("%s without logprobs: %+v, header %q", tc.score, out.Genlens, out.header)
			}
		} else {
			h, _ := strconv.ParseFloat(out.header, 64)
			if out.Genlens.Uncertainty == nil || math.Abs(*out.Genlens.Uncertainty-tc.want) > 1e-12 || math.Abs(h-tc.want) > 1e-12 {
				t.Errorf("%s: %+v, header %q; want %v", tc.score, out.Genlens, out.header, tc.want)
			}
		}
		if bodies, _, _ := up.got(); len(s.reqs) != 1 || !s.reqs[0].Logprobs || !slices.Equal(bodies, []string{body}) {
			t.Errorf("%s: samples asked %+v; the upstream got %q", tc.score, s.reqs, bodies)
		}
	}
	// The other scores ask for no logprobs.
	s := &tokenSampler{}
	p, _ := newTestProxy(t, llmproxy.Options{Sampler: s, Samples: 2})
	callProxy(t, p, body)
	if len(s.reqs) != 1 || s.reqs[0].Logprobs {
		t.Errorf("kernel entropy's samples asked %+v", s.reqs)
	}
}
