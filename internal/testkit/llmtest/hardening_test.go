package llmtest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/genlens/genlens/internal/testkit/llmtest"
	"github.com/genlens/genlens/metric/hallucination/categorical"
)

// The bearer scheme is matched case-insensitively and the key exactly.
func TestAPIKeySchemes(t *testing.T) {
	m := categorical.Symmetric(1, 2, 1)
	h, err := llmtest.NewHandler(llmtest.Config{Model: m, Inputs: []string{"a"}, Labels: []string{"y", "n"}, APIKey: "secret"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		auth string
		code int
	}{
		{"Bearer secret", 200}, {"bearer secret", 200}, {"BEARER secret", 200},
		{"Bearer secre", 401}, {"Bearer secretx", 401}, {"Basic secret", 401}, {"secret", 401}, {"", 401},
	} {
		req, _ := http.NewRequest("GET", "/v1/models", nil)
		if tc.auth != "" {
			req.Header.Set("Authorization", tc.auth)
		}
		rec := &recorder{header: http.Header{}}
		h.ServeHTTP(rec, req)
		if rec.code != tc.code {
			t.Errorf("Authorization %q: %d, want %d", tc.auth, rec.code, tc.code)
		}
	}
}

type recorder struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) Write(b []byte) (int, error) {
	if r.code == 0 {
		r.code = 200
	}
	return r.body.Write(b)
}
func (r *recorder) WriteHeader(c int) { r.code = c }

// An echoed prompt cannot multiply into a response hundreds of times
// its size, and a body over MaxBodyBytes is refused.
func TestResponseAndBodyBounds(t *testing.T) {
	s, _ := newServer(t)
	prompt := strings.Repeat("Input: cat\nLabel: yes\n\n", 20000) // 460 KB
	code, _, body := post(t, s.URL, map[string]any{"model": "genlens-categorical", "prompt": prompt, "echo": true, "logprobs": 5, "n": 8, "max_tokens": 0})
	if code != 400 || !strings.Contains(body, "echo of a") {
		t.Errorf("echo x n 8 x logprobs 5 of 460 KB: %d %s", code, clip(body))
	}
	big := strings.Repeat("Input: cat\nLabel: yes\n\n", 60000) // 1.4 MB
	code, _, body = post(t, s.URL, map[string]any{"model": "genlens-categorical", "prompt": big, "max_tokens": 1})
	if code != 400 {
		t.Errorf("1.4 MB body: %d %s", code, clip(body))
	}
}

func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}

// A client that sends headers and then trickles (or withholds) its body,
// or idles on a kept-alive connection, is disconnected by the timeouts.
func TestServeDropsSlowClients(t *testing.T) {
	defer func(r, w, i time.Duration) {
		llmtest.ServeReadTimeout, llmtest.ServeWriteTimeout, llmtest.ServeIdleTimeout = r, w, i
	}(llmtest.ServeReadTimeout, llmtest.ServeWriteTimeout, llmtest.ServeIdleTimeout)
	llmtest.ServeReadTimeout, llmtest.ServeWriteTimeout, llmtest.ServeIdleTimeout = 300*time.Millisecond, time.Second, 300*time.Millisecond
	m := categorical.Symmetric(1, 2, 1)
	h, err := llmtest.NewHandler(llmtest.Config{Model: m, Inputs: []string{"a"}, Labels: []string{"y", "n"}})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- llmtest.Serve(ctx, ln, h) }()
	defer func() { cancel(); <-done }()

	closedWithin := func(name string, c net.Conn, d time.Duration) {
		t.Helper()
		_ = c.SetReadDeadline(time.Now().Add(d))
		start := time.Now()
		_, err := io.Copy(io.Discard, c)
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Errorf("%s: connection still open after %v", name, time.Since(start).Round(time.Millisecond))
		}
	}
	// Body trickle: headers promise 1000 bytes, one arrives.
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	body, _ := json.Marshal(map[string]any{"model": "genlens-categorical", "prompt": ""})
	_, _ = c.Write([]byte("POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n" + string(body[:1])))
	closedWithin("body trickle", c, 3*time.Second)

	// Idle keep-alive: one complete request, then silence.
	c2, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	_, _ = c2.Write([]byte("GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n"))
	buf := make([]byte, 4096)
	_ = c2.SetReadDeadline(time.Now().Add(2 * time.Second))
	if n, err := c2.Read(buf); err != nil || !bytes.Contains(buf[:n], []byte("200 OK")) {
		t.Fatalf("models: %q, %v", buf[:n], err)
	}
	closedWithin("idle keep-alive", c2, 3*time.Second)
}
