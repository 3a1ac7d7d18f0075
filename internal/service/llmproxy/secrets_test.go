package llmproxy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/genlens/genlens/internal/service/llmproxy"
	"github.com/genlens/genlens/llm"
)

// An upstream that echoes the Authorization header (and another secret
// of the service) in its answers, errors and headers: neither reaches the
// caller, the stored record or the log; nor do the upstream's own
// X-Genlens-*, CORS and Location headers; a redirect, a 304 or a status
// outside HTTP's range is a 502.
func TestProxyKeepsSecrets(t *testing.T) {
	const key, other = "sk-upstream-0123456789", "other-secret-value"
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("a request reached another origin, Authorization %q", r.Header.Get("Authorization"))
	}))
	defer elsewhere.Close()
	mode := ""
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		echo := r.Header.Get("Authorization") + " " + other
		h := w.Header()
		h.Set("X-Genlens-Uncertainty", "0.5")
		h.Set("Access-Control-Allow-Origin", "*")
		h.Set("Location", "http://evil.example/")
		h.Set("X-Echo", echo)
		sampling := bytes.Contains(b, []byte(`"n":`))
		switch {
		case sampling:
			h.Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"error":{"message":%q,"type":"invalid_request_error"}}`, "bad key "+echo)
		case mode == "error":
			h.Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, `{"error":{"message":%q,"type":"invalid_request_error"}}`, "bad key "+echo)
		case mode == "text":
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, "no: "+echo)
		case mode == "answer":
			h.Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"id":"x","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":%q}}]}`, echo)
		case mode == "stream":
			h.Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":%q}}]}\n\ndata: [DONE]\n\n", echo)
		case mode == "redirect":
			http.Redirect(w, r, elsewhere.URL+"/v1/chat/completions", http.StatusTemporaryRedirect)
		case mode == "304":
			w.WriteHeader(http.StatusNotModified)
		case mode == "999":
			w.WriteHeader(999)
		}
	}))
	defer up.Close()
	c, err := llmproxy.NewClient(up.URL+"/v1", key, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	rec := &memRecorder{}
	p, err := llmproxy.New(llmproxy.Options{Client: c, Samples: 2, Recorder: rec, Secrets: []string{other, key},
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(p)
	defer ts.Close()
	for _, tc := range []struct {
		mode   string
		stream bool
		status int
	}{
		{"error", false, 401}, {"text", false, 500}, {"answer", false, 200}, {"stream", true, 200},
		{"redirect", false, 502}, {"304", false, 502}, {"999", false, 502},
	} {
		mode = tc.mode
		body := fmt.Sprintf(`{"model":"m","stream":%v,"messages":[{"role":"user","content":"hi"}]}`, tc.stream)
		resp, err := http.Post(ts.URL, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("%s: status %d, want %d: %s", tc.mode, resp.StatusCode, tc.status, b)
		}
		var hs bytes.Buffer
		resp.Header.Write(&hs)
		for _, s := range []string{key, other} {
			if strings.Contains(string(b), s) || strings.Contains(hs.String(), s) {
				t.Errorf("%s: a secret reaches the caller: %s\n%s", tc.mode, hs.String(), b)
			}
		}
		for _, h := range []string{"Access-Control-Allow-Origin", "Location"} {
			if resp.Header.Get(h) != "" {
				t.Errorf("%s: upstream's %s passed on", tc.mode, h)
			}
		}
		if u := resp.Header.Get("X-Genlens-Uncertainty"); u == "0.5" {
			t.Errorf("%s: upstream's X-Genlens-Uncertainty passed on", tc.mode)
		}
	}
	ts.Close() // its handlers have recorded
	p.Close(t.Context())
	stored, _ := json.Marshal(rec.rs)
	for _, s := range []string{key, other} {
		if strings.Contains(string(stored), s) || strings.Contains(logs.String(), s) {
			t.Errorf("a secret is stored or logged:\n%s\n%s", stored, logs.String())
		}
	}
	if len(rec.rs) != 7 {
		t.Errorf("%d records, want 7", len(rec.rs))
	}
}

// The client's own errors never carry its key, whatever the server
// echoes: `sample` and the proxy's samples report them.
func TestClientErrorsKeepKey(t *testing.T) {
	const key = "sk-client-abcdef0123"
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, "denied: "+r.Header.Get("Authorization"))
	}))
	defer up.Close()
	c, err := llm.New(llm.Config{BaseURL: up.URL, APIKey: key})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = c.Sample(t.Context(), llm.ChatRequest{Model: "m", Messages: []llm.Message{{Role: "user", Content: "hi"}}}, 2)
	if err == nil || strings.Contains(err.Error(), key) {
		t.Fatalf("error %v", err)
	}
}

// A caller's model name is bounded: a long one is refused before it is
// stored, logged or sent upstream.
func TestProxyBoundsModel(t *testing.T) {
	calls := 0
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"x","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"a"}}]}`)
	}))
	defer up.Close()
	c, err := llmproxy.NewClient(up.URL+"/v1", "", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	rec := &memRecorder{}
	p, err := llmproxy.New(llmproxy.Options{Client: c, Sampler: fixedSampler{"a", "b"}, Samples: 2, Recorder: rec})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(p)
	defer ts.Close()
	for _, tc := range []struct {
		n      int
		status int
	}{{llmproxy.MaxModel, 200}, {llmproxy.MaxModel + 1, 400}, {1 << 20, 400}} {
		body := fmt.Sprintf(`{"model":%q,"messages":[{"role":"user","content":"hi"}]}`, strings.Repeat("m", tc.n))
		resp, err := http.Post(ts.URL, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || len(b) > 1000 {
			t.Errorf("model of %d bytes: %d %.200s", tc.n, resp.StatusCode, b)
		}
	}
	ts.Close()
	p.Close(t.Context())
	if calls != 1 || len(rec.rs) != 1 || len(rec.rs[0].Model) > llmproxy.MaxModel {
		t.Errorf("%d upstream calls, %d records", calls, len(rec.rs))
	}
}

// wordsSampler answers n samples of many words each, different per
// sample, after delay, whatever its context says.
type wordsSampler struct {
	words int
	delay time.Duration
}

func (s wordsSampler) Sample(ctx context.Context, req llm.ChatRequest, n int) ([]llm.Choice, llm.Usage, error) {
	time.Sleep(s.delay)
	out := make([]llm.Choice, n)
	for i := range out {
		var b strings.Builder
		for j := range s.words {
			fmt.Fprintf(&b, "w%d ", (i*7+j)%97)
		}
		out[i].Text = b.String()
	}
	return out, llm.Usage{}, nil
}

// Samples of any length are scored within bounds, and a scoring that
// outlasts the proxy's timeout does not hold the answer: the caller gets
// it with an error in place of the uncertainty, and the record says so.
func TestProxyBoundsScoring(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"x","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"a"}}]}`)
	}))
	defer up.Close()
	for _, tc := range []struct {
		name    string
		sampler wordsSampler
		timeout time.Duration
		wantErr string
	}{
		{"long samples", wordsSampler{words: 30_000}, 20 * time.Second, ""},
		{"slow sampling", wordsSampler{words: 3, delay: 3 * time.Second}, 300 * time.Millisecond, "cut at the proxy's timeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := llmproxy.NewClient(up.URL+"/v1", "", tc.timeout)
			if err != nil {
				t.Fatal(err)
			}
			rec := &memRecorder{}
			p, err := llmproxy.New(llmproxy.Options{Client: c, Sampler: tc.sampler, Samples: 5, Score: "kle", Recorder: rec})
			if err != nil {
				t.Fatal(err)
			}
			ts := httptest.NewServer(p)
			defer ts.Close()
			start := time.Now()
			resp, err := (&http.Client{Timeout: 15 * time.Second}).Post(ts.URL, "application/json",
				strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var out struct {
				Genlens struct {
					Uncertainty *float64
					Error       string
				}
			}
			json.Unmarshal(b, &out)
			g := out.Genlens
			if resp.StatusCode != 200 || (tc.wantErr == "") != (g.Uncertainty != nil) || !strings.Contains(g.Error, tc.wantErr) {
				t.Errorf("%d %s", resp.StatusCode, b)
			}
			if tc.wantErr != "" && time.Since(start) > 2*time.Second {
				t.Errorf("answered after %v, the timeout is %v", time.Since(start), tc.timeout)
			}
			ts.Close() // its handlers have recorded
			p.Close(t.Context())
			if len(rec.rs) != 1 || !strings.Contains(rec.rs[0].Error, tc.wantErr) || rec.rs[0].Status != 200 {
				t.Errorf("records %+v", rec.rs)
			}
		})
	}
}

// Samplings an upstream holds until the timeout do not delay other
// callers: once every sampling slot is taken, a request is answered
// without a score after a short wait, not after the timeout.
func TestProxySamplingSlots(t *testing.T) {
	release := make(chan struct{})
	held := make(chan struct{}, 100)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if bytes.Contains(b, []byte(`"n":`)) { // a sampling: held
			held <- struct{}{}
			select {
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"x","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"a"}}]}`)
	}))
	defer up.Close()
	const timeout = 10 * time.Second
	c, err := llmproxy.NewClient(up.URL+"/v1", "", timeout)
	if err != nil {
		t.Fatal(err)
	}
	p, err := llmproxy.New(llmproxy.Options{Client: c, Samples: 2})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(p)
	defer ts.Close()
	defer close(release) // before ts.Close, which waits for the handlers
	body := `{"model":"m","messages":[{"role":"user","content":"hi"}]}`
	for range 64 {
		go func() {
			resp, err := http.Post(ts.URL, "application/json", strings.NewReader(body))
			if err == nil {
				resp.Body.Close()
			}
		}()
	}
	for range 64 { // the 64 samplings are in flight
		select {
		case <-held:
		case <-time.After(10 * time.Second):
			t.Fatal("the samplings did not reach the upstream")
		}
	}
	start := time.Now()
	resp, err := (&http.Client{Timeout: 15 * time.Second}).Post(ts.URL, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if d := time.Since(start); d > 5*time.Second || resp.StatusCode != 200 || !strings.Contains(string(b), "sampling slots busy") {
		t.Errorf("after %v: %d %s", d, resp.StatusCode, b)
	}
}
