package signin

import (
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
