package signin

import (
	"fmt"
	"testing"
	"time"
)

func TestLimiter(t *testing.T) {
	var l Limiter
	now := time.Unix(1e9, 0)
	// One address: loginBurst attempts at once, then a wait of one refill.
	for i := range loginBurst {
		if ok, _ := l.Allow("a", now); !ok {
			t.Fatalf("attempt %d of a burst refused", i+1)
		}
	}
	if ok, wait := l.Allow("a", now); ok || wait != loginRefill {
		t.Errorf("attempt past the burst: %v, wait %v; want refused, %v", ok, wait, loginRefill)
	}
	if ok, _ := l.Allow("a", now.Add(loginRefill)); !ok {
		t.Errorf("refused after one refill")
	}
	// The account: loginAccountBurst failures over many addresses, then new
	// addresses wait, and an address that signed in before does not.
	l.Succeeded("user", now)
	for range loginAccountBurst {
		l.Failed(now)
	}
	if ok, wait := l.Allow("new", now); ok || wait != AccountRefill {
		t.Errorf("a new address with the account's bucket empty: %v, wait %v; want refused, %v", ok, wait, AccountRefill)
	}
	if ok, _ := l.Allow("user", now); !ok {
		t.Errorf("the user's own address locked out")
	}
	if ok, _ := l.Allow("new", now.Add(AccountRefill)); !ok {
		t.Errorf("a new address refused after the account's refill: a lock-out, not a backoff")
	}
}

// Wait and FailedFrom count failures only: a client holding the token
// never runs out, one guessing does after loginBurst failures, and
// another address is not held back by it.
func TestLimiterFailuresOnly(t *testing.T) {
	var l Limiter
	now := time.Unix(1e9, 0)
	for range 3 * loginBurst {
		if wait := l.Wait("client", now); wait != 0 {
			t.Fatalf("a client that never failed waits %v", wait)
		}
		l.Succeeded("client", now)
	}
	for i := range loginBurst {
		if wait := l.Wait("guesser", now); wait != 0 {
			t.Fatalf("failure %d of a burst: waits %v", i+1, wait)
		}
		l.FailedFrom("guesser", now)
	}
	if wait := l.Wait("guesser", now); wait != loginRefill {
		t.Errorf("past the burst: waits %v, want %v", wait, loginRefill)
	}
	if wait := l.Wait("guesser", now.Add(loginRefill)); wait != 0 {
		t.Errorf("after one refill: waits %v", wait)
	}
	if wait := l.Wait("other", now); wait != 0 {
		t.Errorf("another address waits %v", wait)
	}
	// The failures count against the account too: rotating addresses
	// drains it, then new addresses wait and a known one does not.
	for i := range loginAccountBurst {
		l.FailedFrom(fmt.Sprint("rot", i), now)
	}
	if wait := l.Wait("new", now); wait == 0 {
		t.Error("a new address with the account's bucket empty may try")
	}
	if wait := l.Wait("client", now); wait != 0 {
		t.Errorf("a known client waits %v", wait)
	}
	if len(l.buckets) > loginAccountBurst+2 {
		t.Errorf("%d buckets: Wait made some", len(l.buckets))
	}
}
