package llm_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/genlens/genlens/llm"
)

// A server that answers one long choice a request is topped up only
// while the answers so far leave room in the bound of one answer: the
// bytes read across the top-ups stay within it, and the failure says
// how far the answers got. Before, every top-up was bounded alone and
// every choice kept: n of them, each as long as the server liked.
func TestSampleTopUpsBoundedTogether(t *testing.T) {
	choice := strings.Repeat("w", 10<<10) // 10 KiB a choice
	var requests, served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		body := fmt.Sprintf(`{"choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"length"}]}`, choice)
		served.Add(int64(len(body)))
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(body))
	}))
	defer srv.Close()
	c, err := llm.New(llm.Config{BaseURL: srv.URL + "/v1", Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	const bound = 100 << 10 // room for 9 answers of one choice
	req := llm.ChatRequest{Model: "m", Messages: []llm.Message{{Role: "user", Content: "hi"}}, MaxResponseBytes: bound}
	_, _, err = c.Sample(context.Background(), req, 500)
	var se *llm.SizeError
	if !errors.As(err, &se) || se.Limit != bound || se.N != 500 || se.Choices != 9 || se.Responses != 9 {
		t.Fatalf("500 choices of 10 KiB under a 100 KiB bound: %v (%+v)", err, se)
	}
	if !strings.Contains(err.Error(), "102400 bytes") || !strings.Contains(err.Error(), "9 of the 500 choices") {
		t.Errorf("message %q: want the bound and how far the answers got", err)
	}
	if requests.Load() != 10 {
		t.Errorf("%d requests, want 9 that fit and the one that did not", requests.Load())
	}
	if se.Earlier > bound {
		t.Errorf("kept %d bytes, over the bound of %d", se.Earlier, bound)
	}
	// The client's bound applies when the request has none; n that fit
	// come back whole.
	c2, err := llm.New(llm.Config{BaseURL: srv.URL + "/v1", Timeout: 5 * time.Second, MaxResponseBytes: bound})
	if err != nil {
		t.Fatal(err)
	}
	req.MaxResponseBytes = 0
	got, _, err := c2.Sample(context.Background(), req, 9)
	if err != nil || len(got) != 9 {
		t.Errorf("9 choices that fit: %d, %v", len(got), err)
	}
	if _, _, err := c2.Sample(context.Background(), req, 20); !errors.As(err, &se) {
		t.Errorf("20 that do not: %v", err)
	}
}

// AnswerBytes prices what logprobs add: about 1.3 KB a token with 20
// alternatives in OpenAI's shape fits in the price.
func TestAnswerBytes(t *testing.T) {
	if got, want := llm.AnswerBytes(10, 1024, false, 0), int64(10*1024*llm.TokenBytes+llm.AnswerOverhead); got != want {
		t.Errorf("no logprobs: %d, want %d", got, want)
	}
	perToken := (llm.AnswerBytes(1, 1000, true, 20) - llm.AnswerOverhead) / 1000
	if perToken < 1300 || perToken > 4096 {
		t.Errorf("%d bytes a token with 20 alternatives: want at least 1.3 KB and not far past it", perToken)
	}
	if got := llm.AnswerBytes(1<<30, 1<<30, true, 1<<20); got <= 0 {
		t.Errorf("overflow: %d", got)
	}
}

// A server that never answers fails a request within RequestTimeout,
// retries included: with Timeout alone each of the attempts waits that
// long (a judge held a run for 5 × 60 s).
func TestRequestTimeoutBoundsRetries(t *testing.T) {
	var attempts atomic.Int64
	hang := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		attempts.Add(1)
		select {
		case <-r.Context().Done():
		case <-hang:
		}
	}))
	defer srv.Close()
	defer close(hang)
	c, err := llm.New(llm.Config{BaseURL: srv.URL + "/v1", Timeout: time.Hour, RequestTimeout: 50 * time.Millisecond, MaxRetries: 4, RetryBase: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = c.Chat(context.Background(), llm.ChatRequest{Model: "m", Messages: []llm.Message{{Role: "user", Content: "hi"}}})
	if err == nil || !strings.Contains(err.Error(), "no complete response within 50ms, retries included") {
		t.Fatalf("a server that never answers: %v", err)
	}
	if n := attempts.Load(); n != 1 {
		t.Errorf("%d attempts, want the one the bound allowed", n)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("%v reads as the caller's own deadline", err)
	}
}
