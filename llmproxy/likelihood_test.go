package llmproxy_test

import (
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/genlens/genlens/llm"
	"github.com/genlens/genlens/llmproxy"
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
	var gotBody string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		gotBody = string(b)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"x","model":"tiny","choices":[{"index":0,"message":{"role":"assistant","content":"Paris"}}]}`+"\n")
	}))
	defer up.Close()
	c, err := llm.New(llm.Config{BaseURL: up.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
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
		p, err := llmproxy.New(llmproxy.Options{Client: c, Sampler: s, Samples: 4, Score: tc.score})
		if err != nil {
			t.Fatal(err)
		}
		ts := httptest.NewServer(p)
		resp, err := http.Post(ts.URL, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		ts.Close()
		var out struct {
			Genlens struct {
				Uncertainty *float64
				Error       string
			}
		}
		if err := json.Unmarshal(b, &out); err != nil || resp.StatusCode != 200 {
			t.Fatalf("%d %s", resp.StatusCode, b)
		}
		if math.IsNaN(tc.want) {
			if out.Genlens.Uncertainty != nil || !strings.Contains(out.Genlens.Error, "sent no logprobs") || resp.Header.Get("X-Genlens-Uncertainty") != "" {
				t.Errorf("%s without logprobs: %s %v", tc.score, b, resp.Header)
			}
		} else {
			h, _ := strconv.ParseFloat(resp.Header.Get("X-Genlens-Uncertainty"), 64)
			if out.Genlens.Uncertainty == nil || math.Abs(*out.Genlens.Uncertainty-tc.want) > 1e-12 || math.Abs(h-tc.want) > 1e-12 {
				t.Errorf("%s: %s, header %v; want %v", tc.score, b, resp.Header.Get("X-Genlens-Uncertainty"), tc.want)
			}
		}
		if len(s.reqs) != 1 || !s.reqs[0].Logprobs || gotBody != body {
			t.Errorf("%s: samples asked %+v; the upstream got %q", tc.score, s.reqs, gotBody)
		}
		if err := p.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	// The other scores ask for no logprobs.
	s := &tokenSampler{}
	p, err := llmproxy.New(llmproxy.Options{Client: c, Sampler: s, Samples: 2})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(p)
	resp, err := http.Post(ts.URL, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	ts.Close()
	p.Close(context.Background())
	if len(s.reqs) != 1 || s.reqs[0].Logprobs {
		t.Errorf("kernel entropy's samples asked %+v", s.reqs)
	}
}
