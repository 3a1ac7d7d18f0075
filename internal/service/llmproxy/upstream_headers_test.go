package llmproxy_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/genlens/genlens/internal/service/llmproxy"
	"github.com/genlens/genlens/llm"
)

// An upstream that echoes its Authorization header in an error, and
// sets the proxy's own header, CORS and Location: the key reaches no
// answer, row or log line, and none of those headers reaches the caller.
func TestUpstreamKeyAndHeadersStayInside(t *testing.T) {
	const key = "sk-upstream-secret-0123456789"
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Genlens-Uncertainty", "0.5")
		h.Set("Access-Control-Allow-Origin", "*")
		h.Set("Location", "https://elsewhere.example/")
		h.Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"error":{"message":"bad key: `+r.Header.Get("Authorization")+`","type":"auth"}}`)
	}))
	defer up.Close()
	c, err := llm.New(llm.Config{BaseURL: up.URL + "/v1", APIKey: key})
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	rec := &memRecorder{}
	p, err := llmproxy.New(llmproxy.Options{Client: c, Sampler: fixedSampler{"a", "b"}, Samples: 2, Recorder: rec,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(p)
	defer ts.Close()
	post := func(body string) (*http.Response, string) {
		resp, err := http.Post(ts.URL, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(b)
	}
	resp, b := post(`{"model":"tiny","messages":[{"role":"user","content":"hi"}]}`)
	if resp.StatusCode != http.StatusUnauthorized || strings.Contains(b, key) {
		t.Errorf("answer: %d %s", resp.StatusCode, b)
	}
	for _, h := range []string{"X-Genlens-Uncertainty", "Access-Control-Allow-Origin", "Location"} {
		if v := resp.Header.Get(h); v != "" {
			t.Errorf("the upstream's %s reached the caller: %q", h, v)
		}
	}
	resp, b = post(`{"model":"` + strings.Repeat("m", llmproxy.MaxModel+1) + `","messages":[{"role":"user","content":"hi"}]}`)
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("an overlong model name: %d %s, want 400", resp.StatusCode, b)
	}
	if err := p.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(rec.rs) != 1 {
		t.Fatalf("%d rows stored, want 1 (the overlong model is refused before anything is stored)", len(rec.rs))
	}
	if r := rec.rs[0]; strings.Contains(r.Error+r.Answer+r.Model, key) {
		t.Errorf("the stored row holds the key: %+v", r)
	}
	if strings.Contains(logs.String(), key) {
		t.Errorf("the log holds the key: %s", logs.String())
	}
}
