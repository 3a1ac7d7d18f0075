package signin

import (
	"math"
	"sync"
	"time"
)

// The limits: a token bucket per client address, so that a sign-in form
// cannot be used to guess the token at network speed; and one bucket of
// failed attempts for the token itself (the account), so that an attacker
// rotating addresses (or behind the same load balancer as everyone) gets
// no more guesses than loginAccountBurst and one per AccountRefill
// over all of them. While the account's bucket is empty, only addresses
// that signed in before (loginKnown of them, for loginKnownFor) may try:
// an attack delays new addresses by at most one refill per failure and
// never locks out an address the token was given from.
const (
	loginBurst   = 10              // attempts at once
	loginRefill  = 6 * time.Second // one more attempt every 6 s
	loginClients = 10_000          // addresses remembered; full buckets are forgotten first

	loginAccountBurst = 30               // failures over all addresses at once
	AccountRefill     = 10 * time.Second // one more every 10 s (exported for tests of the servers that use it)
	loginKnown        = 1000             // addresses that signed in, remembered
	loginKnownFor     = 30 * 24 * time.Hour
)

// Limiter holds the buckets of sign-in attempts per client address,
// the account's bucket of failures and the addresses that signed in. Its
// zero value is ready; it is safe for concurrent use.
type Limiter struct {
	mu      sync.Mutex
	buckets map[string]*bucket
	account *bucket
	known   map[string]time.Time // address → last successful sign-in
}

type bucket struct {
	tokens float64
	at     time.Time
}

// fill adds what the bucket gained since its last use, up to burst.
func (b *bucket) fill(now time.Time, burst float64, refill time.Duration) {
	b.tokens = math.Min(burst, b.tokens+float64(now.Sub(b.at))/float64(refill))
	b.at = now
}

// Allow takes one attempt from addr's bucket at now; when it is empty,
// or the account's bucket of failures is and addr never signed in, it
// returns false and how long until the next attempt.
func (l *Limiter) Allow(addr string, now time.Time) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.bucket(addr, now)
	if wait := l.wait(b, addr, now); wait > 0 {
		return false, wait
	}
	b.tokens--
	return true, 0
}

// Wait is how long addr must wait before its next attempt at now (0: it
// may try), as Allow decides, without taking an attempt: for a check
// that counts only the failures (FailedFrom), such as a bearer token on
// every request, where a client holding the token must not run out.
func (l *Limiter) Wait(addr string, now time.Time) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.init(now)
	// An address without a bucket has a full one: none is made for it,
	// so that the requests of many addresses cost no memory here.
	b := l.buckets[addr]
	if b == nil {
		b = &bucket{tokens: loginBurst, at: now}
	}
	return l.wait(b, addr, now)
}

// FailedFrom counts a wrong token from addr against its bucket and the
// account's.
func (l *Limiter) FailedFrom(addr string, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.bucket(addr, now)
	b.fill(now, loginBurst, loginRefill)
	b.tokens = math.Max(0, b.tokens-1)
	l.failed(now)
}

func (l *Limiter) init(now time.Time) {
	if l.buckets == nil {
		l.buckets = map[string]*bucket{}
		l.known = map[string]time.Time{}
		l.account = &bucket{tokens: loginAccountBurst, at: now}
	}
}

// bucket returns addr's bucket, made full when it has none.
func (l *Limiter) bucket(addr string, now time.Time) *bucket {
	l.init(now)
	b := l.buckets[addr]
	if b == nil {
		if len(l.buckets) >= loginClients {
			l.prune(now)
		}
		b = &bucket{tokens: loginBurst, at: now}
		l.buckets[addr] = b
	}
	return b
}

// wait fills b, addr's bucket, and the account's to now and says how
// long addr must wait for its next attempt.
func (l *Limiter) wait(b *bucket, addr string, now time.Time) time.Duration {
	b.fill(now, loginBurst, loginRefill)
	if b.tokens < 1 {
		return time.Duration((1 - b.tokens) * float64(loginRefill))
	}
	l.account.fill(now, loginAccountBurst, AccountRefill)
	if t, ok := l.known[addr]; (!ok || now.Sub(t) > loginKnownFor) && l.account.tokens < 1 {
		return time.Duration((1 - l.account.tokens) * float64(AccountRefill))
	}
	return 0
}

// Failed counts a wrong token against the account.
func (l *Limiter) Failed(now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.init(now)
	l.failed(now)
}

func (l *Limiter) failed(now time.Time) {
	l.account.fill(now, loginAccountBurst, AccountRefill)
	l.account.tokens = math.Max(0, l.account.tokens-1)
}

// Succeeded remembers addr as one the token was given from.
func (l *Limiter) Succeeded(addr string, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.init(now)
	if t, ok := l.known[addr]; ok && now.Sub(t) < time.Minute {
		return // remembered a moment ago: every request of a client calls this
	}
	if len(l.known) >= loginKnown {
		for k, t := range l.known {
			if now.Sub(t) > loginKnownFor {
				delete(l.known, k)
			}
		}
		if len(l.known) >= loginKnown {
			clear(l.known)
		}
	}
	l.known[addr] = now
}

// prune forgets the buckets that have refilled, then, if that is not
// enough, all of them: an attacker with many addresses must not grow the
// map without bound.
func (l *Limiter) prune(now time.Time) {
	for k, b := range l.buckets {
		if b.tokens+float64(now.Sub(b.at))/float64(loginRefill) >= loginBurst {
			delete(l.buckets, k)
		}
	}
	if len(l.buckets) >= loginClients {
		clear(l.buckets)
	}
}
