package server

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/genlens/genlens/internal/signin"
	"github.com/genlens/genlens/internal/store"
	"github.com/genlens/genlens/internal/testkit/dbtest"
)

// Sign-in attempts are limited per account, not only per address: an
// attacker rotating addresses gets 30 wrong guesses, then one every 10 s
// over all of them; an address that signed in before still signs in
// during the attack, and a new one once the account's bucket refills (a
// backoff, never a permanent lock).
func TestLoginLimitedPerAccount(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, dbtest.SQLite(t))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	const token = "0123456789abcdef"
	s, err := New(ctx, Options{Store: db, Token: token, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(ctx); db.Close() })
	post := func(addr, tok string) int {
		r := httptest.NewRequest(http.MethodPost, "/login", strings.NewReader(url.Values{"token": {tok}}.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.RemoteAddr = addr + ":40000"
		w := httptest.NewRecorder()
		s.Handler().ServeHTTP(w, r)
		return w.Code
	}
	if code := post("192.0.2.1", token); code != http.StatusSeeOther {
		t.Fatalf("the user signs in: %d", code)
	}
	// One wrong guess from each of 30 addresses: each is 401.
	for i := range 30 {
		if code := post("198.51.100."+string(rune('a'+i%26))+string(rune('a'+i/26)), "wrong"); code != 401 {
			t.Fatalf("guess %d: %d, want 401", i+1, code)
		}
	}
	if code := post("203.0.113.7", "wrong"); code != http.StatusTooManyRequests {
		t.Errorf("a 31st guess from a fresh address: %d, want 429", code)
	}
	if code := post("203.0.113.8", token); code != http.StatusTooManyRequests {
		t.Errorf("a new address during the attack: %d, want 429", code)
	}
	if code := post("192.0.2.1", token); code != http.StatusSeeOther {
		t.Errorf("the user's address during the attack: %d, want 303", code)
	}
	mu.Lock()
	now = now.Add(signin.AccountRefill)
	mu.Unlock()
	if code := post("203.0.113.8", token); code != http.StatusSeeOther {
		t.Errorf("a new address once the account's bucket refilled: %d, want 303", code)
	}
	if code := post("203.0.113.9", "wrong"); code != 401 {
		t.Errorf("a guess after the refill: %d, want 401", code)
	}
	if code := post("203.0.113.10", "wrong"); code != http.StatusTooManyRequests {
		t.Errorf("a second guess after one refill: %d, want 429", code)
	}
}
