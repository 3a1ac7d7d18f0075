package server

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/genlens/genlens/internal/store"
	"github.com/genlens/genlens/internal/testkit/dbtest"
)

// Wrong bearer tokens on the API and the LLM proxy are limited per
// address as the sign-in form's guesses are: a flood from one address
// gets 429 with Retry-After (even for the right token, so that it learns
// nothing), while the right token from another address still works, and
// a client holding the token is never limited however often it calls.
func TestWrongBearerTokensLimited(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, dbtest.SQLite(t))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const token = "s3cret-s3cret-s3cret"
	s, err := New(ctx, Options{Store: db, Token: token, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(ctx); db.Close() })
	h := s.Handler()
	call := func(method, path, addr, tok string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, path, strings.NewReader("{}"))
		req.RemoteAddr = addr + ":4321"
		req.Header.Set("Content-Type", "application/json")
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	for i := range 100 {
		if rec := call("GET", "/api/v1/monitors", "192.0.2.9", token); rec.Code != 200 {
			t.Fatalf("the right token, request %d: %d %s", i+1, rec.Code, rec.Body)
		}
	}
	for i := range 50 {
		if rec := call("GET", "/api/v1/monitors", "192.0.2.9", ""); rec.Code != 401 {
			t.Fatalf("no token, request %d: %d, want 401 (not a guess)", i+1, rec.Code)
		}
	}
	for _, c := range []struct{ name, method, path, attacker string }{
		{"api", "GET", "/api/v1/monitors", "198.51.100.1"},
		{"proxy", "POST", "/v1/chat/completions", "198.51.100.2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			counts := map[int]int{}
			for range 200 {
				rec := call(c.method, c.path, c.attacker, "guess")
				counts[rec.Code]++
				if rec.Code == 429 && rec.Header().Get("Retry-After") != "6" {
					t.Fatalf("429 with Retry-After %q, want 6", rec.Header().Get("Retry-After"))
				}
			}
			if counts[401] != 10 || counts[429] != 190 {
				t.Errorf("200 wrong tokens from one address: %v; want 10 × 401, then 429", counts)
			}
			if rec := call(c.method, c.path, c.attacker, token); rec.Code != 429 {
				t.Errorf("the right token from the flooding address: %d, want 429 (no oracle)", rec.Code)
			}
			if rec := call("GET", "/api/v1/monitors", "203.0.113.7", token); rec.Code != 200 {
				t.Errorf("the right token from another address: %d %s", rec.Code, rec.Body)
			}
		})
	}
	now = now.Add(6 * time.Second)
	if rec := call("GET", "/api/v1/monitors", "198.51.100.1", "guess"); rec.Code != 401 {
		t.Errorf("a guess after one refill: %d, want 401", rec.Code)
	}
}
