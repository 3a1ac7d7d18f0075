package llmproxy_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/genlens/genlens/internal/service/llmproxy"
	"github.com/genlens/genlens/internal/store/records"
	"github.com/genlens/genlens/llm"
)

type memRecorder struct {
	mu sync.Mutex
	rs []records.LLMRequest
}

func (m *memRecorder) InsertLLMRequests(ctx context.Context, rs []records.LLMRequest) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rs = append(m.rs, rs...)
	return nil
}

type fixedSampler []string

func (f fixedSampler) Sample(ctx context.Context, req llm.ChatRequest, n int) ([]llm.Choice, llm.Usage, error) {
	out := make([]llm.Choice, n)
	for i := range out {
		out[i].Text = f[i%len(f)]
	}
	return out, llm.Usage{}, nil
}

// parisUpstream is a fake upstream that answers every request "Paris"
// and keeps what it got.
type parisUpstream struct {
	client *llm.Client // a client of it, with the key sk-up
	mu     sync.Mutex
	bodies []string // the requests' bodies, paths and Authorization headers, in order
	paths  []string
	keys   []string
}

func (u *parisUpstream) got() (bodies, paths, keys []string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return slices.Clone(u.bodies), slices.Clone(u.paths), slices.Clone(u.keys)
}

// newTestProxy returns a proxy with opts over a new parisUpstream
// (opts.Client is its client), and the upstream; both are closed when
// the test ends.
func newTestProxy(t *testing.T, opts llmproxy.Options) (*llmproxy.Proxy, *parisUpstream) {
	t.Helper()
	u := &parisUpstream{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		u.mu.Lock()
		u.bodies, u.paths, u.keys = append(u.bodies, string(b)), append(u.paths, r.URL.Path), append(u.keys, r.Header.Get("Authorization"))
		u.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"x","model":"tiny","choices":[{"index":0,"message":{"role":"assistant","content":"Paris"}}]}`+"\n")
	}))
	t.Cleanup(srv.Close)
	c, err := llm.New(llm.Config{BaseURL: srv.URL + "/v1", APIKey: "sk-up"})
	if err != nil {
		t.Fatal(err)
	}
	u.client, opts.Client = c, c
	p, err := llmproxy.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close(context.Background()) })
	return p, u
}

// The proxy stands alone: an http.Handler over an llm.Client, with its
// records and metrics through its options.
func TestProxyStandsAlone(t *testing.T) {
	rec := &memRecorder{}
	observed := make(chan records.LLMRequest, 1)
	p, up := newTestProxy(t, llmproxy.Options{Sampler: fixedSampler{"Paris", "Lyon"}, Samples: 4, Recorder: rec,
		Observe: func(r records.LLMRequest) { observed <- r }})
	ts := httptest.NewServer(p)
	defer ts.Close()
	body := `{"model":"tiny","messages":[{"role":"user","content":"Capital of France?"}]}`
	req, _ := http.NewRequest("POST", ts.URL, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer caller-secret")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("X-Genlens-Uncertainty") == "" {
		t.Fatalf("%d %s %v", resp.StatusCode, b, resp.Header)
	}
	var out struct {
		Genlens struct {
			Score   string
			Samples int
		}
	}
	if err := json.Unmarshal(b, &out); err != nil || out.Genlens.Score != llmproxy.DefaultScore || out.Genlens.Samples != 4 {
		t.Errorf("%s: %v", b, err)
	}
	if bodies, _, keys := up.got(); !slices.Equal(keys, []string{"Bearer sk-up"}) || !slices.Equal(bodies, []string{body}) {
		t.Errorf("upstream got %q %q, want the client's key and the body as sent", keys, bodies)
	}
	// The answer is the caller's before the request is recorded.
	if o := <-observed; o.Status != 200 || o.Samples != 4 {
		t.Errorf("observed %+v", o)
	}
	if err := p.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(rec.rs) != 1 || rec.rs[0].Answer != "Paris" || rec.rs[0].Model != "tiny" {
		t.Errorf("recorded %+v", rec.rs)
	}
}

func TestNewRefuses(t *testing.T) {
	c, err := llm.New(llm.Config{BaseURL: "http://127.0.0.1:1/v1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []llmproxy.Options{
		{},
		{Client: c, Samples: 1},
		{Client: c, Samples: llmproxy.MaxSamples + 1},
		{Client: c, Score: "lexical-similarity"},
		{Client: c, Score: "se"}, // no judge
		{Client: c, Score: "kernel-entropy", Judge: llmproxy.Judge{BaseURL: "http://127.0.0.1:1/v1", Model: "j"}},
		{Client: c, Score: "se", Judge: llmproxy.Judge{BaseURL: "http://127.0.0.1:1/v1"}},
		{Client: c, Score: "se", Judge: llmproxy.Judge{NLI: "bert", BaseURL: "http://127.0.0.1:1/v1", Model: "j"}},
		{Client: c, Score: "mte", TopLogprobs: llm.MaxTopLogprobs + 1},
		{Client: c, Score: "msp", TopLogprobs: 5},
		{Client: c, Score: "msp", PTruePrompt: "{answer}?"},
		{Client: c, Score: "ptrue", PTruePrompt: "no placeholder"},
	} {
		if _, err := llmproxy.New(o); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
}
