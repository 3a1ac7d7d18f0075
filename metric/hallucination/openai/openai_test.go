package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/genlens/genlens/internal/testkit/llmtest"
	"github.com/genlens/genlens/llm"
	"github.com/genlens/genlens/metric/hallucination"
	"github.com/genlens/genlens/metric/hallucination/categorical"
	"github.com/genlens/genlens/metric/hallucination/openai"
)

var (
	inputs = []string{"red apple", "banana", "cherry pie"}
	labels = []string{"sweet", "sour", "bitter"}
)

// serve starts the exact categorical model behind the completions API on
// 127.0.0.1 and returns a client for it.
func serve(t testing.TB, m categorical.Model, mutate func(*openai.Config)) (*openai.Client, *llmtest.Handler) {
	t.Helper()
	h, err := llmtest.NewHandler(llmtest.Config{Model: m, Inputs: inputs[:m.Groups], Labels: labels[:m.Labels()], APIKey: "test-key"})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	cfg := openai.Config{BaseURL: srv.URL + "/v1", Model: "genlens-categorical", APIKey: "test-key", Timeout: 10 * time.Second, Concurrency: 8}
	if mutate != nil {
		mutate(&cfg)
	}
	c, err := openai.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c, h
}

func named(d []categorical.Example) []openai.Example {
	out := make([]openai.Example, len(d))
	for i, e := range d {
		out[i] = openai.Example{X: inputs[e.X], Y: labels[e.Y]}
	}
	return out
}

// The OpenAI backend against the local server gives the same estimates,
// bit for bit, as the same model called directly with the same seed: the
// imagined examples are generated and parsed, the responses generated and
// scored from the returned token log-probabilities.
func TestSameEstimatesAsDirectModel(t *testing.T) {
	ctx := context.Background()
	m := categorical.Symmetric(3, 3, 0.5)
	client, h := serve(t, m, nil)
	r := rand.New(rand.NewPCG(1, 2))
	truth, _ := m.SampleTruth(r)
	for i, n := range []int{0, 3, 10} {
		d := truth.Data(r, n)
		x := i % 3
		opt := hallucination.Options{M: 6, K: 30, Extra: 5, Seed: uint64(10 + i), Concurrency: 3}
		direct, err := hallucination.Estimate(ctx, m, d, x, opt)
		if err != nil {
			t.Fatal(err)
		}
		viaAPI, err := hallucination.Estimate(ctx, client, named(d), inputs[x], opt)
		if err != nil {
			t.Fatal(err)
		}
		if direct.PHR != viaAPI.PHR || direct.Total != viaAPI.Total || direct.Aleatoric != viaAPI.Aleatoric || direct.Epistemic != viaAPI.Epistemic {
			t.Errorf("n=%d: direct PHR %v total %v aleatoric %v; via the API %v, %v, %v", n, direct.PHR, direct.Total, direct.Aleatoric, viaAPI.PHR, viaAPI.Total, viaAPI.Aleatoric)
		}
		for j := range direct.THR {
			if direct.THR[j] != viaAPI.THR[j] {
				t.Errorf("n=%d: THR[%d] %v direct, %v via the API", n, j, direct.THR[j], viaAPI.THR[j])
			}
		}
		for j, y := range direct.Responses {
			if labels[y] != viaAPI.Responses[j] {
				t.Fatalf("n=%d: response %d is %q direct, %q via the API", n, j, labels[y], viaAPI.Responses[j])
			}
		}
		if got, want := hallucination.ErrorRate(viaAPI.Responses, labels[0]), hallucination.ErrorRate(direct.Responses, 0); got != want {
			t.Errorf("error rate %v via the API, %v direct", got, want)
		}
	}
	if h.Requests() == 0 {
		t.Error("the server saw no requests")
	}
	req, retries := client.Stats()
	t.Logf("%d requests, %d retries", req, retries)
}

// Sample, LogProb and SamplePair agree with the direct model one by one.
func TestPrimitivesMatchDirectModel(t *testing.T) {
	ctx := context.Background()
	m := categorical.Model{Groups: 2, Alpha: []float64{0.3, 1, 2}}
	client, _ := serve(t, m, nil)
	d := []categorical.Example{{X: 0, Y: 1}, {X: 1, Y: 2}, {X: 0, Y: 1}}
	post, _ := m.Posterior(d)
	cond, err := client.Condition(ctx, named(d))
	if err != nil {
		t.Fatal(err)
	}
	if want := "Input: red apple\nLabel: sour\n\nInput: banana\nLabel: bitter\n\nInput: red apple\nLabel: sour\n\n"; cond.(*openai.Prompt).Text() != want {
		t.Errorf("prompt %q, want %q", cond.(*openai.Prompt).Text(), want)
	}
	ys := []string{"sweet", "sour", "bitter", "sour", "sour"}
	got := make([]float64, len(ys))
	if err := cond.LogProb(ctx, "red apple", ys, got); err != nil {
		t.Fatal(err)
	}
	pred := post.Predictive(0)
	for i, y := range []int{0, 1, 2, 1, 1} {
		if got[i] != math.Log(pred[y]) {
			t.Errorf("log p(%s) = %v, want %v", ys[i], got[i], math.Log(pred[y]))
		}
	}
	r1, r2 := rand.New(rand.NewPCG(3, 3)), rand.New(rand.NewPCG(3, 3))
	apiYs, apiLogp := make([]string, 40), make([]float64, 40)
	dirYs, dirLogp := make([]int, 40), make([]float64, 40)
	if err := cond.Sample(ctx, r1, "banana", apiYs, apiLogp); err != nil {
		t.Fatal(err)
	}
	_ = post.Sample(ctx, r2, 1, dirYs, dirLogp)
	for i := range apiYs {
		if apiYs[i] != labels[dirYs[i]] || apiLogp[i] != dirLogp[i] {
			t.Fatalf("draw %d: %q (%v) via the API, %q (%v) direct", i, apiYs[i], apiLogp[i], labels[dirYs[i]], dirLogp[i])
		}
	}
	for range 20 {
		a, err := cond.SamplePair(ctx, r1)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := post.SamplePair(ctx, r2)
		if a.X != inputs[b.X] || a.Y != labels[b.Y] {
			t.Fatalf("imagined pair %v via the API, (%s, %s) direct", a, inputs[b.X], labels[b.Y])
		}
	}
}

func TestRejectsBadContext(t *testing.T) {
	client, _ := serve(t, categorical.Symmetric(1, 2, 1), nil)
	ctx := context.Background()
	for _, d := range [][]openai.Example{
		{{X: "a", Y: ""}},
		{{X: "a", Y: "two\nlines"}},
		{{X: "a\nLabel: b", Y: "c"}},
		{{X: "", Y: "c"}},
	} {
		if _, err := client.Condition(ctx, d); err == nil {
			t.Errorf("context %q: no error", d)
		}
	}
	// A label the served model does not know is a 400 from the server.
	cond, _ := client.Condition(ctx, nil)
	err := cond.LogProb(ctx, "red apple", []string{"salty"}, make([]float64, 1))
	if err == nil || !strings.Contains(err.Error(), "400") || !strings.Contains(err.Error(), `unknown label "salty"`) {
		t.Errorf("unknown label: %v", err)
	}
}

func TestNewValidates(t *testing.T) {
	for _, cfg := range []openai.Config{
		{BaseURL: "127.0.0.1:8000", Model: "m"},
		{BaseURL: "ftp://127.0.0.1/v1", Model: "m"},
		{BaseURL: "http://127.0.0.1/v1"},
		{BaseURL: "http://127.0.0.1/v1", Model: "m", Concurrency: -1},
		{BaseURL: "http://127.0.0.1/v1", Model: "m", PairTopP: 1.5},
		{BaseURL: "http://127.0.0.1/v1", Model: "m", MaxRetries: -1},
	} {
		_, err := openai.New(cfg)
		if err == nil {
			t.Errorf("New(%+v): no error", cfg)
			continue
		}
		// One prefix: the package the caller called, not package llm's.
		if msg := err.Error(); !strings.HasPrefix(msg, "openai: ") || strings.Contains(msg, "llm:") {
			t.Errorf("New(%+v): %q, want one \"openai: \" prefix", cfg, msg)
		}
	}
}

func TestParsePairAndFormat(t *testing.T) {
	for _, tc := range []struct {
		text, x, y string
		ok         bool
	}{
		{" banana\nLabel: sweet", "banana", "sweet", true},
		{" a long input, with commas\nLabel:  not entailment \nInput: next", "a long input, with commas", "not entailment", true},
		{" banana\nLabel:", "", "", false},
		{" banana", "", "", false},
		{"\nLabel: sweet", "", "", false},
	} {
		x, y, ok := openai.ParsePair(tc.text)
		if x != tc.x || y != tc.y || ok != tc.ok {
			t.Errorf("ParsePair(%q) = %q, %q, %v", tc.text, x, y, ok)
		}
	}
	if got := openai.FormatExample("x", "y") + openai.FormatQuery("q"); got != "Input: x\nLabel: y\n\nInput: q\nLabel:" {
		t.Errorf("format %q", got)
	}
}

// fakeServer serves a fixed handler on 127.0.0.1 and counts requests and
// new connections.
type fakeServer struct {
	*httptest.Server
	requests, conns atomic.Int64
}

func newFake(t *testing.T, handler func(w http.ResponseWriter, r *http.Request, n int64)) *fakeServer {
	f := &fakeServer{}
	f.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		handler(w, r, f.requests.Add(1))
	}))
	f.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			f.conns.Add(1)
		}
	}
	f.Start()
	t.Cleanup(f.Close)
	return f
}

func fakeClient(t *testing.T, f *fakeServer, mutate func(*openai.Config)) *openai.Client {
	cfg := openai.Config{BaseURL: f.URL + "/v1", Model: "m", Timeout: 2 * time.Second, MaxRetries: 2, RetryBase: time.Millisecond}
	if mutate != nil {
		mutate(&cfg)
	}
	c, err := openai.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

const okBody = `{"choices":[{"index":0,"text":" sweet","logprobs":{"tokens":[" sweet"],"token_logprobs":[-0.25],"text_offset":[30]},"finish_reason":"stop"}]}`

// Bad server behaviour gives clear errors, promptly, and no panic.
func TestBadServers(t *testing.T) {
	ctx := context.Background()
	sample := func(c *openai.Client) error {
		cond, err := c.Condition(ctx, nil)
		if err != nil {
			return err
		}
		return cond.Sample(ctx, rand.New(rand.NewPCG(1, 1)), "q", make([]string, 1), make([]float64, 1))
	}
	for _, tc := range []struct {
		name     string
		handler  func(w http.ResponseWriter, r *http.Request, n int64)
		want     []string
		requests int64 // expected attempts (MaxRetries = 2)
		is       error
	}{
		{"no logprobs", func(w http.ResponseWriter, _ *http.Request, _ int64) {
			fmt.Fprint(w, `{"choices":[{"index":0,"text":" sweet","logprobs":null,"finish_reason":"stop"}]}`)
		}, []string{"no token log-probabilities", "logprobs"}, 1, openai.ErrNoLogprobs},
		{"empty logprobs", func(w http.ResponseWriter, _ *http.Request, _ int64) {
			fmt.Fprint(w, `{"choices":[{"index":0,"text":" sweet","logprobs":{"tokens":[],"token_logprobs":[]}}]}`)
		}, []string{"no token log-probabilities"}, 1, openai.ErrNoLogprobs},
		{"malformed JSON", func(w http.ResponseWriter, _ *http.Request, _ int64) {
			fmt.Fprint(w, `{"choices":[{"text": "sw`)
		}, []string{"malformed JSON"}, 1, nil},
		{"no choices", func(w http.ResponseWriter, _ *http.Request, _ int64) {
			fmt.Fprint(w, `{"choices":[]}`)
		}, []string{"no choices"}, 1, nil},
		{"500s", func(w http.ResponseWriter, _ *http.Request, _ int64) {
			w.WriteHeader(500)
			fmt.Fprint(w, `{"error":{"message":"CUDA out of memory"}}`)
		}, []string{"500", "CUDA out of memory", "gave up after 3 attempts"}, 3, nil},
		{"400", func(w http.ResponseWriter, _ *http.Request, _ int64) {
			w.WriteHeader(400)
			fmt.Fprint(w, `{"error":{"message":"echo is not supported"}}`)
		}, []string{"400", "echo is not supported"}, 1, nil},
		{"HTML error page", func(w http.ResponseWriter, _ *http.Request, _ int64) {
			w.WriteHeader(502)
			fmt.Fprint(w, `<html><body>Bad Gateway</body></html>`)
		}, []string{"502", "Bad Gateway"}, 3, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, tc.handler)
			err := sample(fakeClient(t, f, nil))
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %v is not %v", err, tc.is)
			}
			if got := f.requests.Load(); got != tc.requests {
				t.Errorf("%d requests, want %d", got, tc.requests)
			}
		})
	}
}

func TestHangingServerTimesOut(t *testing.T) {
	release := make(chan struct{})
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, _ int64) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	defer close(release)
	c := fakeClient(t, f, func(cfg *openai.Config) { cfg.Timeout = 50 * time.Millisecond; cfg.MaxRetries = 1 })
	start := time.Now()
	_, err := c.Complete(context.Background(), llm.CompletionBody{Prompt: "x", MaxTokens: 1})
	if err == nil || !strings.Contains(err.Error(), "no complete response within 50ms") {
		t.Errorf("error %v", err)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("took %v", el)
	}
	if got := f.requests.Load(); got != 2 {
		t.Errorf("%d attempts, want 2", got)
	}
	// A cancelled context ends the wait at once, without retries.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	c = fakeClient(t, f, func(cfg *openai.Config) { cfg.Timeout = time.Minute })
	if _, err := c.Complete(ctx, llm.CompletionBody{Prompt: "x"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("cancelled: error %v", err)
	}
}

// 429 with Retry-After, then success: the request is retried after the
// server's delay; the API key is sent and never shows in errors.
func TestRetryAfterAndAuth(t *testing.T) {
	var auth atomic.Value
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int64) {
		auth.Store(r.Header.Get("Authorization"))
		if n == 1 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(429)
			return
		}
		fmt.Fprint(w, okBody)
	})
	c := fakeClient(t, f, func(cfg *openai.Config) { cfg.APIKey = "sk-secret" })
	start := time.Now()
	resp, err := c.Complete(context.Background(), llm.CompletionBody{Prompt: "x"})
	if err != nil || resp.Choices[0].Text != " sweet" {
		t.Fatalf("%v, %v", resp, err)
	}
	if el := time.Since(start); el < 900*time.Millisecond {
		t.Errorf("retried after %v, want Retry-After's 1s", el)
	}
	if got := auth.Load(); got != "Bearer sk-secret" {
		t.Errorf("Authorization %q", got)
	}
	if req, retries := c.Stats(); req != 2 || retries != 1 {
		t.Errorf("Stats = %d, %d", req, retries)
	}
	f2 := newFake(t, func(w http.ResponseWriter, _ *http.Request, _ int64) { w.WriteHeader(401) })
	_, err = fakeClient(t, f2, func(cfg *openai.Config) { cfg.APIKey = "sk-secret" }).Complete(context.Background(), llm.CompletionBody{})
	if err == nil || strings.Contains(err.Error(), "sk-secret") || !strings.Contains(err.Error(), "401") {
		t.Errorf("401: %v", err)
	}
}

func TestResponseSizeLimit(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, _ *http.Request, _ int64) {
		fmt.Fprintf(w, `{"choices":[{"text":"%s"}]}`, strings.Repeat("a", 5000))
	})
	c := fakeClient(t, f, func(cfg *openai.Config) { cfg.MaxResponseBytes = 1000 })
	if _, err := c.Complete(context.Background(), llm.CompletionBody{}); err == nil || !strings.Contains(err.Error(), "larger than 1000 bytes") {
		t.Errorf("error %v", err)
	}
}

// Connections are reused, and no more than Concurrency requests are in
// flight at once.
func TestConnectionReuseAndConcurrencyLimit(t *testing.T) {
	var inFlight, peak atomic.Int64
	f := newFake(t, func(w http.ResponseWriter, _ *http.Request, _ int64) {
		n := inFlight.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		time.Sleep(2 * time.Millisecond)
		inFlight.Add(-1)
		fmt.Fprint(w, okBody)
	})
	c := fakeClient(t, f, func(cfg *openai.Config) { cfg.Concurrency = 4 })
	cond, _ := c.Condition(context.Background(), nil)
	ys, logp := make([]string, 200), make([]float64, 200)
	if err := cond.Sample(context.Background(), rand.New(rand.NewPCG(1, 1)), "q", ys, logp); err != nil {
		t.Fatal(err)
	}
	if ys[0] != "sweet" || logp[0] != -0.25 {
		t.Errorf("response %q %v", ys[0], logp[0])
	}
	if got := peak.Load(); got > 4 {
		t.Errorf("%d requests in flight, limit 4", got)
	}
	// A finished connection goes back to the idle pool from the
	// transport's read loop, a moment after the response is handed over,
	// so the next request now and then dials a new one; without reuse
	// there would be 200.
	if got := f.conns.Load(); got > 8 {
		t.Errorf("%d connections for 200 requests with concurrency 4: not reused", got)
	}
}

// A server that ignores echo, or whose tokenizer merges the label into
// the preceding text, is reported rather than mis-scored.
func TestScoringErrors(t *testing.T) {
	ctx := context.Background()
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, _ int64) { fmt.Fprint(w, okBody) })
	cond, _ := fakeClient(t, f, nil).Condition(ctx, nil)
	err := cond.LogProb(ctx, "q", []string{"sweet"}, make([]float64, 1))
	if err == nil || !strings.Contains(err.Error(), "did not echo") {
		t.Errorf("no echo: %v", err)
	}
	merged := newFake(t, func(w http.ResponseWriter, r *http.Request, _ int64) {
		var req llm.CompletionBody
		_ = json.NewDecoder(r.Body).Decode(&req)
		p := "Input: q\nLabel: sweet"
		resp := llm.CompletionResponse{Choices: []llm.CompletionChoice{{Text: p, Logprobs: &llm.Logprobs{
			Tokens:        []string{"Input", ":", " q", "\n", "Label", ": sweet"},
			TokenLogprobs: []*float64{nil, f64(-1), f64(-2), f64(-0.1), f64(-0.5), f64(-0.3)},
			TextOffset:    []int{0, 5, 6, 8, 9, 14},
		}}}}
		_ = json.NewEncoder(w).Encode(resp)
	})
	cond, _ = fakeClient(t, merged, nil).Condition(ctx, nil)
	err = cond.LogProb(ctx, "q", []string{"sweet"}, make([]float64, 1))
	if err == nil || !strings.Contains(err.Error(), "does not start a token") {
		t.Errorf("merged token: %v", err)
	}
}

func f64(v float64) *float64 { return &v }

// Inconsistent log-probability structures are errors, never panics.
func TestMalformedLogprobs(t *testing.T) {
	ctx := context.Background()
	for _, lp := range []string{
		`{"tokens":[" a"],"token_logprobs":[-1, -2]}`,
		`{"token_logprobs":[-1],"text_offset":[0, 3]}`,
		`{"tokens":[" sweet"],"token_logprobs":[null]}`,
		`{"tokens":[" sweet"],"token_logprobs":[0.5]}`,
		`{"token_logprobs":[-1],"text_offset":[0]}`,
	} {
		f := newFake(t, func(w http.ResponseWriter, _ *http.Request, _ int64) {
			fmt.Fprintf(w, `{"choices":[{"text":" sweet","logprobs":%s}]}`, lp)
		})
		cond, _ := fakeClient(t, f, nil).Condition(ctx, nil)
		err := cond.Sample(ctx, rand.New(rand.NewPCG(1, 1)), "q", make([]string, 1), make([]float64, 1))
		if lp == `{"token_logprobs":[-1],"text_offset":[0]}` {
			if err != nil {
				t.Errorf("offsets without token strings: %v", err)
			}
			continue
		}
		if err == nil {
			t.Errorf("logprobs %s: no error", lp)
		}
	}
}

// A redirect to another origin (here the same host, another port) is
// refused without retries: the prompt and the bearer key never reach the
// other server. A redirect within the origin is followed. A response
// larger than MaxResponseBytes is refused before it is decoded.
func TestRedirectsAndLargeResponses(t *testing.T) {
	ctx := context.Background()
	sample := func(c *openai.Client) error {
		cond, err := c.Condition(ctx, nil)
		if err != nil {
			return err
		}
		return cond.Sample(ctx, rand.New(rand.NewPCG(1, 1)), "q", make([]string, 1), make([]float64, 1))
	}
	var leaked atomic.Int64
	other := newFake(t, func(w http.ResponseWriter, r *http.Request, _ int64) {
		if r.Header.Get("Authorization") != "" || r.Method == http.MethodPost {
			leaked.Add(1)
		}
		fmt.Fprint(w, okBody)
	})
	away := newFake(t, func(w http.ResponseWriter, r *http.Request, _ int64) {
		http.Redirect(w, r, other.URL+"/v1/completions", http.StatusTemporaryRedirect)
	})
	err := sample(fakeClient(t, away, func(c *openai.Config) { c.APIKey = "secret" }))
	if err == nil || !strings.Contains(err.Error(), "another origin") {
		t.Errorf("cross-origin redirect: %v", err)
	}
	if leaked.Load() != 0 || other.requests.Load() != 0 {
		t.Errorf("the other server got %d requests (%d with the prompt or key)", other.requests.Load(), leaked.Load())
	}
	if away.requests.Load() != 1 {
		t.Errorf("%d attempts at a refused redirect, want 1 (no retries)", away.requests.Load())
	}
	var same *fakeServer
	same = newFake(t, func(w http.ResponseWriter, r *http.Request, n int64) {
		if r.URL.Path == "/v1/completions" {
			http.Redirect(w, r, same.URL+"/v2/completions", http.StatusTemporaryRedirect)
			return
		}
		fmt.Fprint(w, okBody)
	})
	if err := sample(fakeClient(t, same, nil)); err != nil {
		t.Errorf("same-origin redirect: %v", err)
	}
	huge := newFake(t, func(w http.ResponseWriter, _ *http.Request, _ int64) {
		fmt.Fprint(w, `{"choices":[{"index":0,"text":"`+strings.Repeat("x", 5<<20)+`"}]}`)
	})
	if err := sample(fakeClient(t, huge, nil)); err == nil || !strings.Contains(err.Error(), "response larger than") {
		t.Errorf("5 MiB response: %v", err)
	}
}

// Text from a server reaches error messages clipped and with control
// bytes escaped: a megabyte error page or an escape sequence cannot flood
// or garble the terminal.
func TestServerTextClippedAndEscaped(t *testing.T) {
	ctx := context.Background()
	for _, body := range []string{
		`{"error":{"message":"bad\u0000\u001b[31mred` + strings.Repeat("m", 1<<20) + `"}}`,
		"\x00\x1b[2J" + strings.Repeat("z", 1<<20),
	} {
		f := newFake(t, func(w http.ResponseWriter, _ *http.Request, _ int64) {
			w.WriteHeader(400)
			fmt.Fprint(w, body)
		})
		cond, err := fakeClient(t, f, nil).Condition(ctx, nil)
		if err == nil {
			err = cond.Sample(ctx, rand.New(rand.NewPCG(1, 1)), "q", make([]string, 1), make([]float64, 1))
		}
		if err == nil {
			t.Fatal("no error")
		}
		msg := err.Error()
		if len(msg) > 600 || strings.ContainsAny(msg, "\x00\x1b") {
			t.Errorf("error of %d bytes, control bytes %v: %.200q", len(msg), strings.ContainsAny(msg, "\x00\x1b"), msg)
		}
	}
}
