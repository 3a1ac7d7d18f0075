package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/genlens/genlens/internal/service/llmproxy"
	"github.com/genlens/genlens/internal/service/server"
	"github.com/genlens/genlens/internal/testkit/dbtest"
	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/job/llmjob"
	"github.com/genlens/genlens/llm"
)

// fakeUpstream is an OpenAI-compatible /chat/completions whose answer
// the test decides: a fixed body, an error, a stream, or a hang.
type fakeUpstream struct {
	*httptest.Server
	mu      sync.Mutex
	reqs    []*http.Request
	bodies  [][]byte
	handler func(w http.ResponseWriter, r *http.Request, body []byte)
}

// The upstream's answer, spaced and ordered as a server might: the
// proxy must return it byte for byte apart from the added key.
const upstreamAnswer = `{"id":"chatcmpl-1","object":"chat.completion","created":1764147600,"model":"tiny",
  "choices":[{"index":0,"message":{"role":"assistant","content":"Paris is the capital."},"finish_reason":"stop"}],
  "usage":{"prompt_tokens":9,"completion_tokens":5,"total_tokens":14}, "system_fingerprint": null}
`

func newFakeUpstream(t *testing.T) *fakeUpstream {
	f := &fakeUpstream{}
	f.handler = func(w http.ResponseWriter, r *http.Request, body []byte) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Upstream", "yes")
		io.WriteString(w, upstreamAnswer)
	}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" || r.Method != "POST" {
			http.NotFound(w, r)
			return
		}
		b, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.reqs, f.bodies = append(f.reqs, r), append(f.bodies, b)
		h := f.handler
		f.mu.Unlock()
		h(w, r, b)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeUpstream) set(h func(w http.ResponseWriter, r *http.Request, body []byte)) {
	f.mu.Lock()
	f.handler = h
	f.mu.Unlock()
}

func (f *fakeUpstream) last(t *testing.T) (*http.Request, []byte) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.reqs) == 0 {
		t.Fatal("the upstream got no request")
	}
	return f.reqs[len(f.reqs)-1], f.bodies[len(f.bodies)-1]
}

// fakeSampler returns fixed samples per model and records its requests.
type fakeSampler struct {
	mu      sync.Mutex
	reqs    []llm.ChatRequest
	samples map[string][]string
	err     error
	delay   time.Duration
}

func (s *fakeSampler) Sample(ctx context.Context, req llm.ChatRequest, n int) ([]llm.Choice, llm.Usage, error) {
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	texts, err, delay := s.samples[req.Model], s.err, s.delay
	s.mu.Unlock()
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return nil, llm.Usage{}, ctx.Err()
		}
	}
	if err != nil {
		return nil, llm.Usage{}, err
	}
	if len(texts) == 0 {
		return nil, llm.Usage{}, fmt.Errorf("model %q not found", req.Model)
	}
	out := make([]llm.Choice, 0, n)
	for i := range n {
		out = append(out, llm.Choice{Text: texts[i%len(texts)], FinishReason: "stop"})
	}
	return out, llm.Usage{}, nil
}

var tinySamples = []string{"Paris is the capital.", "It is Paris.", "Paris", "The capital of France is Paris.", "Lyon, I think."}

func newProxy(t *testing.T, opts server.Options) (*testServer, *fakeUpstream, *fakeSampler) {
	t.Helper()
	return newProxyOn(t, dbtest.SQLite(t), opts)
}

// newProxyOn is newProxy on the store dsn.
func newProxyOn(t *testing.T, dsn string, opts server.Options) (*testServer, *fakeUpstream, *fakeSampler) {
	t.Helper()
	return newProxyTimeout(t, dsn, opts, 0)
}

// newProxyTimeout is newProxyOn with the upstream client's timeout (0:
// llm's default).
func newProxyTimeout(t *testing.T, dsn string, opts server.Options, timeout time.Duration) (*testServer, *fakeUpstream, *fakeSampler) {
	t.Helper()
	up := newFakeUpstream(t)
	fs := &fakeSampler{samples: map[string][]string{"tiny": tinySamples}}
	opts.LLM.Client = upstreamClient(t, up.URL+"/v1", "sk-upstream", timeout)
	opts.LLM.Sampler = fs
	ts := newTestServer(t, dsn, opts)
	return ts, up, fs
}

// upstreamClient is the proxy's client of the upstream at base.
func upstreamClient(t testing.TB, base, key string, timeout time.Duration) *llm.Client {
	t.Helper()
	c, err := llm.New(llm.Config{BaseURL: base, APIKey: key, Timeout: timeout, Name: "upstream"}) // as serve makes it
	if err != nil {
		t.Fatal(err)
	}
	return c
}

const chatBody = `{"model": "tiny", "messages": [{"role": "system", "content": "Answer briefly."}, {"role": "user", "content": [{"type":"text","text":"Capital of "},{"type":"text","text":"France?"}]}], "max_tokens": 32, "temperature": 0}`

func post(t *testing.T, url, token, body string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest("POST", url+"/v1/chat/completions", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// kernelEntropyOf is what `genlens entropy` (llmjob.Entropy with the command
// line's defaults) reports for one prompt with these samples.
func kernelEntropyOf(t *testing.T, samples []string) float64 {
	t.Helper()
	return scoreOf(t, "kernel-entropy", samples)
}

// scoreOf is `genlens entropy --scores score` for one prompt.
func scoreOf(t *testing.T, score string, samples []string) float64 {
	t.Helper()
	row, _ := json.Marshal(map[string]any{"id": "p", "samples": samples})
	req := llmjob.NewEntropyRequest()
	req.In, req.Scores = "in.jsonl", score
	res, err := llmjob.Entropy(context.Background(), job.Env{FS: fstest.MapFS{"in.jsonl": {Data: append(row, '\n')}}}, req)
	if err != nil {
		t.Fatal(err)
	}
	v := res.Items[0].Score(score)
	if v == nil {
		t.Fatalf("entropy gave no %s for %q", score, samples)
	}
	return float64(*v)
}

type llmRequests struct {
	Requests []struct {
		ID           int64
		Time         time.Time
		Model        string
		MessagesHash string `json:"messages_hash"`
		Answer       string
		Stream       bool
		Status       int
		Score        string
		Uncertainty  *float64
		Samples      int
		Error        string
		Upstream     float64 `json:"upstream_seconds"`
		Total        float64 `json:"total_seconds"`
	}
}

// waitRequests polls the listing until it holds n requests: the proxy
// stores a request after the caller has its answer.
func (ts *testServer) waitRequests(t *testing.T, query string, n int) llmRequests {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var out llmRequests
		if code, raw := ts.call(t, "GET", "/api/v1/llm/requests"+query, nil, &out); code != 200 {
			t.Fatalf("list: %d %s", code, raw)
		}
		if len(out.Requests) >= n || time.Now().After(deadline) {
			if len(out.Requests) != n {
				t.Fatalf("%d stored requests, want %d", len(out.Requests), n)
			}
			return out
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestLLMProxyAnswer(t *testing.T) {
	ts, up, fs := newProxy(t, server.Options{Token: "genlens-token-for-tests"})
	resp, b := post(t, ts.URL, "genlens-token-for-tests", chatBody)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	want := kernelEntropyOf(t, tinySamples)
	// Byte for byte: the upstream's answer with one key added last.
	key := fmt.Sprintf(`"genlens":{"uncertainty":%s,"score":"kernel-entropy","samples":5}`, strconv.FormatFloat(want, 'g', -1, 64))
	body := strings.TrimRight(upstreamAnswer, "\n")
	if wantBody := body[:len(body)-1] + "," + key + "}\n"; string(b) != wantBody {
		t.Errorf("answer\n%s\nwant\n%s", b, wantBody)
	}
	var parsed struct {
		Genlens struct {
			Uncertainty float64
			Score       string
			Samples     int
		}
	}
	if err := json.Unmarshal(b, &parsed); err != nil {
		t.Fatal(err)
	}
	if parsed.Genlens.Uncertainty != want || want >= 0 || want < -1 {
		t.Errorf("uncertainty %v, want the kernel entropy of the samples %v (in [-1, 0))", parsed.Genlens.Uncertainty, want)
	}
	if h := resp.Header.Get("X-Genlens-Uncertainty"); h != strconv.FormatFloat(want, 'g', -1, 64) {
		t.Errorf("X-Genlens-Uncertainty %q, want %v", h, want)
	}
	if resp.Header.Get("X-Upstream") != "yes" || resp.Header.Get("Content-Type") != "application/json" {
		t.Errorf("upstream headers not passed: %v", resp.Header)
	}
	// The request reached the upstream as it was, with the upstream's
	// key instead of the caller's token.
	r, got := up.last(t)
	if string(got) != chatBody {
		t.Errorf("upstream got\n%s\nwant\n%s", got, chatBody)
	}
	if a := r.Header.Get("Authorization"); a != "Bearer sk-upstream" {
		t.Errorf("upstream Authorization %q, want the upstream key", a)
	}
	// The samples: the same messages at temperature 1, n = k.
	fs.mu.Lock()
	sr := fs.reqs[0]
	fs.mu.Unlock()
	var raws []string
	for _, m := range sr.Messages {
		raws = append(raws, string(m.Raw))
	}
	msgs := "[" + strings.Join(raws, ",") + "]"
	if sr.Model != "tiny" || sr.N != 5 || sr.Temperature == nil || *sr.Temperature != 1 || sr.MaxTokens != 32 ||
		msgs != `[{"role": "system", "content": "Answer briefly."},{"role": "user", "content": [{"type":"text","text":"Capital of "},{"type":"text","text":"France?"}]}]` {
		t.Errorf("sample request %+v with messages %s", sr, msgs)
	}

	list := ts.waitRequests(t, "", 1)
	g := list.Requests[0]
	if g.Model != "tiny" || g.Answer != "Paris is the capital." || g.Status != 200 || g.Uncertainty == nil || *g.Uncertainty != want ||
		g.Samples != 5 || g.Score != "kernel-entropy" || g.Stream || len(g.MessagesHash) != 64 || g.Total <= 0 || g.Upstream <= 0 {
		t.Errorf("stored %+v", g)
	}
	// Neither key is stored anywhere.
	_, raw := ts.call(t, "GET", "/api/v1/llm/requests", nil, nil)
	if strings.Contains(string(raw), "sk-upstream") || strings.Contains(string(raw), "genlens-token-for-tests") {
		t.Errorf("a key in the stored requests: %s", raw)
	}
	// Metrics.
	_, m := ts.call(t, "GET", "/metrics", nil, nil)
	for _, line := range []string{
		`genlens_llm_requests_total{code="200",model="tiny"} 1`,
		`genlens_llm_uncertainty_count{model="tiny"} 1`,
		fmt.Sprintf(`genlens_llm_uncertainty_sum{model="tiny"} %s`, strconv.FormatFloat(want, 'g', -1, 64)),
		`genlens_llm_upstream_seconds_count{model="tiny"} 1`,
	} {
		if !strings.Contains(string(m), line+"\n") {
			t.Errorf("metrics lack %q", line)
		}
	}
}

// The uncertainty is the kernel entropy of whatever samples were drawn:
// identical samples are certain (the minimum, -1: the mean kernel value
// over pairs of distinct samples, negated, with k(x, x) = 1), samples
// sharing no word the most uncertain (0), and two clusters of 2 and 3
// identical answers -(2·1 + 3·2)/(5·4) = -0.4.
func TestLLMProxyUncertaintyEqualsKernelEntropy(t *testing.T) {
	ts, _, fs := newProxy(t, server.Options{})
	for _, tc := range []struct {
		samples []string
		want    float64 // hand-computed; NaN: only compare with llmjob.Entropy
	}{
		{[]string{"Paris", "Paris", "Paris", "Paris", "Paris"}, -1},
		{[]string{"alpha", "beta", "gamma", "delta", "epsilon"}, 0},
		{[]string{"red apple", "red apple", "green pear", "green pear", "green pear"}, -0.4},
		{[]string{"the cat sat on the mat", "a cat sat on a mat", "the dog ran", "cats sit on mats", "the cat sat"}, math.NaN()},
	} {
		fs.mu.Lock()
		fs.samples["tiny"] = tc.samples
		fs.mu.Unlock()
		resp, b := post(t, ts.URL, "", chatBody)
		if resp.StatusCode != 200 {
			t.Fatalf("status %d: %s", resp.StatusCode, b)
		}
		var a struct{ Genlens struct{ Uncertainty float64 } }
		json.Unmarshal(b, &a)
		if ke := kernelEntropyOf(t, tc.samples); a.Genlens.Uncertainty != ke {
			t.Errorf("%q: uncertainty %v, kernel entropy %v", tc.samples, a.Genlens.Uncertainty, ke)
		}
		if !math.IsNaN(tc.want) && math.Abs(a.Genlens.Uncertainty-tc.want) > 1e-12 {
			t.Errorf("%q: uncertainty %v, want %v", tc.samples, a.Genlens.Uncertainty, tc.want)
		}
	}
}

func TestLLMProxyAuth(t *testing.T) {
	ts, up, _ := newProxy(t, server.Options{Token: "genlens-token-for-tests"})
	for _, tok := range []string{"", "wrong", "sk-upstream"} {
		resp, b := post(t, ts.URL, tok, chatBody)
		var e struct {
			Error struct{ Message, Type, Code string }
		}
		if resp.StatusCode != 401 || json.Unmarshal(b, &e) != nil || e.Error.Code != "invalid_api_key" {
			t.Errorf("token %q: %d %s, want 401 with an OpenAI error", tok, resp.StatusCode, b)
		}
	}
	up.mu.Lock()
	n := len(up.reqs)
	up.mu.Unlock()
	if n != 0 {
		t.Errorf("%d requests reached the upstream without the token", n)
	}
	// The listing needs the token too.
	req, _ := http.NewRequest("GET", ts.URL+"/api/v1/llm/requests", nil)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 401 {
		t.Errorf("listing without token: %v %v", resp.StatusCode, err)
	}
}

// Without a server token, the caller's Authorization header is still
// never forwarded: the upstream sees its own key, or none.
func TestLLMProxyNoTokenNoForward(t *testing.T) {
	up := newFakeUpstream(t)
	ts := newTestServer(t, dbtest.SQLite(t), server.Options{LLM: server.LLMOptions{Client: upstreamClient(t, up.URL+"/v1/", "", 0),
		Sampler: &fakeSampler{samples: map[string][]string{"tiny": tinySamples}}}})
	resp, b := post(t, ts.URL, "sk-caller-secret", chatBody)
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	r, _ := up.last(t)
	if a := r.Header.Get("Authorization"); a != "" {
		t.Errorf("upstream got Authorization %q", a)
	}
}

func TestLLMProxyErrors(t *testing.T) {
	ts, up, fs := newProxyTimeout(t, dbtest.SQLite(t), server.Options{}, 300*time.Millisecond)
	type errBody struct {
		Error struct {
			Message string
			Type    string
			Code    any
		}
	}
	rateLimit := `{"error":{"message":"Rate limit reached","type":"requests","param":null,"code":"rate_limit_exceeded"}}`
	for _, tc := range []struct {
		name     string
		handler  func(w http.ResponseWriter, r *http.Request, body []byte)
		status   int
		body     string // exact body, when not ""
		contains string // in the error message
	}{
		{"openai error as is", func(w http.ResponseWriter, r *http.Request, _ []byte) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Retry-After", "3")
			w.WriteHeader(429)
			io.WriteString(w, rateLimit)
		}, 429, rateLimit, "Rate limit reached"},
		{"plain text error wrapped", func(w http.ResponseWriter, r *http.Request, _ []byte) {
			http.Error(w, "model overloaded", http.StatusServiceUnavailable)
		}, 503, "", "upstream: model overloaded"},
		{"hang cut at the timeout", func(w http.ResponseWriter, r *http.Request, _ []byte) {
			<-r.Context().Done()
		}, 504, "", "upstream silent for 300ms"},
		{"not JSON", func(w http.ResponseWriter, r *http.Request, _ []byte) {
			io.WriteString(w, "<html>hello</html>")
		}, 502, "", "not a JSON object"},
		{"cut-off body", func(w http.ResponseWriter, r *http.Request, _ []byte) {
			w.Header().Set("Content-Length", "1000")
			io.WriteString(w, `{"id":"x","choices":[`)
		}, 502, "", "upstream: unexpected EOF"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up.set(tc.handler)
			start := time.Now()
			resp, b := post(t, ts.URL, "", chatBody)
			if took := time.Since(start); took > 3*time.Second {
				t.Errorf("took %v", took)
			}
			var e errBody
			if resp.StatusCode != tc.status || json.Unmarshal(b, &e) != nil || !strings.Contains(e.Error.Message, tc.contains) {
				t.Errorf("%d %s, want %d with %q", resp.StatusCode, b, tc.status, tc.contains)
			}
			if tc.body != "" && string(b) != tc.body {
				t.Errorf("body %s, want the upstream's %s", b, tc.body)
			}
			if strings.Contains(string(b), up.URL) {
				t.Errorf("the upstream's address in the error: %s", b)
			}
		})
	}
	list := ts.waitRequests(t, "", 5)
	for _, r := range list.Requests {
		if r.Uncertainty != nil || r.Error == "" || r.Status < 400 {
			t.Errorf("stored error request %+v", r)
		}
	}

	// A scoring failure never fails the answer.
	up.set(func(w http.ResponseWriter, r *http.Request, _ []byte) { io.WriteString(w, upstreamAnswer) })
	fs.mu.Lock()
	fs.err = fmt.Errorf("sampler down")
	fs.mu.Unlock()
	resp, b := post(t, ts.URL, "", chatBody)
	var a struct {
		Choices []any
		Genlens map[string]any
	}
	if resp.StatusCode != 200 || json.Unmarshal(b, &a) != nil || len(a.Choices) != 1 || a.Genlens["error"] != "sampling: sampler down" || len(a.Genlens) != 1 {
		t.Errorf("sampling failure: %d %s", resp.StatusCode, b)
	}
	if resp.Header.Get("X-Genlens-Uncertainty") != "" {
		t.Errorf("an uncertainty header without an uncertainty")
	}
	// Nor does a sampling error of the client serve makes (llm.Config.Name)
	// show the upstream's address.
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(500) }))
	defer down.Close()
	_, _, serr := upstreamClient(t, down.URL+"/v1", "", 0).Sample(context.Background(), llm.ChatRequest{Model: "tiny", Messages: []llm.Message{{Role: "user", Content: "hi"}}}, 1)
	fs.mu.Lock()
	fs.err = serr
	fs.mu.Unlock()
	resp, b = post(t, ts.URL, "", chatBody)
	if resp.StatusCode != 200 || strings.Contains(string(b), down.URL) ||
		!strings.Contains(string(b), `"genlens":{"error":"sampling: llm: POST upstream/chat/completions: 500 Internal Server Error"}`) {
		t.Errorf("sampling error: %d %s", resp.StatusCode, b)
	}
	// A sampler slower than the timeout: the answer still comes, with
	// the error, within about the timeout.
	fs.mu.Lock()
	fs.err, fs.delay = nil, time.Hour
	fs.mu.Unlock()
	start := time.Now()
	resp, b = post(t, ts.URL, "", chatBody)
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"genlens":{"error":"sampling and scoring cut at the proxy's timeout (300ms)"}`) || time.Since(start) > 3*time.Second {
		t.Errorf("slow sampler: %d %s after %v", resp.StatusCode, b, time.Since(start))
	}
}

// Every --llm-score is the number `genlens entropy --scores` gives for
// the samples drawn.
func TestLLMProxyScores(t *testing.T) {
	for _, score := range llmproxy.Scores() {
		if !slices.Contains([]string{"degree", "ecc", "eigv", "kernel-entropy", "kle"}, score) {
			continue // scores of logprobs, a judge, p(True) or a question of their own, which the fake sampler does not serve: see llmproxy's tests
		}
		t.Run(score, func(t *testing.T) {
			ts, _, _ := newProxy(t, server.Options{LLM: server.LLMOptions{Score: score}})
			resp, b := post(t, ts.URL, "", chatBody)
			var a struct {
				Genlens struct {
					Uncertainty float64
					Score       string
				}
			}
			if err := json.Unmarshal(b, &a); err != nil || resp.StatusCode != 200 {
				t.Fatalf("%d %s", resp.StatusCode, b)
			}
			if want := scoreOf(t, score, tinySamples); a.Genlens.Uncertainty != want || a.Genlens.Score != score {
				t.Errorf("%s %v, want %v", a.Genlens.Score, a.Genlens.Uncertainty, want)
			}
		})
	}
	if got := strings.Join(llmproxy.Scores(), ","); got != "ccp,cocoa-msp,cocoa-mte,cocoa-ppl,degree,ecc,eigv,kernel-entropy,kle,label-prob,linguistic-1s,luq,msp,mte,ne,numsets,pe,perplexity,ptrue,ptrue-empirical,sar,se,se-discrete,semantic-density,sentence-sar,token-sar,verbalized-1s,verbalized-2s" {
		t.Errorf("scores %s", got)
	}
}

func TestLLMProxyBadRequests(t *testing.T) {
	ts, up, _ := newProxy(t, server.Options{MaxBody: 1 << 10})
	for _, tc := range []struct {
		body   string
		status int
	}{
		{`{"model": "tiny", "messages": [`, 400},
		{`not json`, 400},
		{`{"model":"tiny","messages":[{"role":"user","content":"` + strings.Repeat("x", 2000) + `"}]}`, 413},
	} {
		resp, b := post(t, ts.URL, "", tc.body)
		var e struct{ Error struct{ Message string } }
		if resp.StatusCode != tc.status || json.Unmarshal(b, &e) != nil || e.Error.Message == "" {
			t.Errorf("%.40s: %d %s, want %d", tc.body, resp.StatusCode, b, tc.status)
		}
	}
	up.mu.Lock()
	defer up.mu.Unlock()
	if len(up.reqs) != 0 {
		t.Errorf("a bad request reached the upstream")
	}
}

// A stream is passed through event by event: the caller reads each
// event before the upstream writes the next; the uncertainty goes to the
// store only.
func TestLLMProxyStream(t *testing.T) {
	ts, up, _ := newProxy(t, server.Options{})
	events := []string{
		`data: {"id":"c1","object":"chat.completion.chunk","model":"tiny","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`,
		`data: {"id":"c1","object":"chat.completion.chunk","model":"tiny","choices":[{"index":0,"delta":{"content":"Paris"}}]}`,
		`data: {"id":"c1","object":"chat.completion.chunk","model":"tiny","choices":[{"index":0,"delta":{"content":" it is."},"finish_reason":"stop"}]}`,
		`data: [DONE]`,
	}
	next := make(chan struct{})
	up.set(func(w http.ResponseWriter, r *http.Request, _ []byte) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i, e := range events {
			if i > 0 {
				select {
				case <-next:
				case <-time.After(5 * time.Second):
					return // the caller never saw the previous event
				}
			}
			io.WriteString(w, e+"\n\n")
			w.(http.Flusher).Flush()
		}
	})
	body := strings.Replace(chatBody, `"temperature": 0`, `"temperature": 0, "stream": true`, 1)
	req, _ := http.NewRequest("POST", ts.URL+"/v1/chat/completions", strings.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" || resp.Header.Get("X-Genlens-Uncertainty") != "" {
		t.Fatalf("stream: %d %v", resp.StatusCode, resp.Header)
	}
	br := bufio.NewReader(resp.Body)
	var got []string
	for i := range events {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		blank, _ := br.ReadString('\n')
		if blank != "\n" {
			t.Fatalf("event %d not followed by a blank line: %q", i, blank)
		}
		got = append(got, strings.TrimSuffix(line, "\n"))
		if i < len(events)-1 {
			next <- struct{}{}
		}
	}
	if rest, _ := io.ReadAll(br); len(rest) != 0 || strings.Join(got, "|") != strings.Join(events, "|") {
		t.Errorf("stream events %q then %q, want %q", got, rest, events)
	}
	_, sent := up.last(t)
	if string(sent) != body {
		t.Errorf("upstream got %s", sent)
	}
	list := ts.waitRequests(t, "", 1)
	g := list.Requests[0]
	if want := kernelEntropyOf(t, tinySamples); !g.Stream || g.Answer != "Paris it is." || g.Uncertainty == nil || *g.Uncertainty != want || g.Status != 200 {
		t.Errorf("stored stream %+v", g)
	}
}

// The listing's filters, on every store backend.
func TestLLMRequestsQuery(t *testing.T) {
	for _, b := range dbtest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) { testLLMRequestsQuery(t, b.DSN(t)) })
	}
}

func testLLMRequestsQuery(t *testing.T, dsn string) {
	ts, _, fs := newProxyOn(t, dsn, server.Options{})
	for _, s := range [][]string{{"a", "a", "a", "a", "a"}, {"a", "b", "c", "d", "e"}} {
		fs.mu.Lock()
		fs.samples["tiny"] = s
		fs.mu.Unlock()
		post(t, ts.URL, "", chatBody)
	}
	ts.waitRequests(t, "", 2)
	if got := ts.waitRequests(t, "?min_uncertainty=-0.5", 1); *got.Requests[0].Uncertainty != 0 {
		t.Errorf("min_uncertainty: %+v", got)
	}
	ts.waitRequests(t, "?since="+time.Now().Add(time.Hour).UTC().Format(time.RFC3339), 0)
	ts.waitRequests(t, "?since="+time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)+"&order=uncertainty&limit=2", 2)
	for _, q := range []string{"?since=yesterday", "?min_uncertainty=NaN", "?min_uncertainty=x", "?limit=0", "?limit=1001", "?order=random"} {
		var e struct{ Field string }
		if code, raw := ts.call(t, "GET", "/api/v1/llm/requests"+q, nil, &e); code != 400 || e.Field == "" {
			t.Errorf("%s: %d %s, want 400 naming the field", q, code, raw)
		}
	}
}

func TestLLMOptionsRefused(t *testing.T) {
	fs := &fakeSampler{}
	c := upstreamClient(t, "http://127.0.0.1:1/v1", "", 0)
	for _, o := range []server.LLMOptions{
		{Client: c, Sampler: fs, Samples: 1},
		{Client: c, Sampler: fs, Samples: llmproxy.MaxSamples + 1},
		{Client: c, Sampler: fs, Score: "lexical-similarity"},
		{Sampler: fs}, // samples without an upstream
	} {
		opts := server.Options{LLM: o}
		db := newTestServer(t, dbtest.SQLite(t), server.Options{}).db
		opts.Store = db
		if _, err := server.New(context.Background(), opts); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
}
