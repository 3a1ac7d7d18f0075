package server

import (
	"context"
	"errors"
	"io"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode"

	"github.com/genlens/genlens/fault"
	"golang.org/x/sync/semaphore"
)

// MinTokenLen is the fewest characters other than spaces a bearer token
// may have: New refuses a shorter one (" " was once accepted, and a short
// token is guessed).
const MinTokenLen = 16

// CheckToken returns a *fault.FieldError ({token}) saying why tok is not a
// usable bearer token: fewer than MinTokenLen characters other than white
// space.
func CheckToken(tok string) error {
	n := 0
	for _, r := range tok {
		if !unicode.IsSpace(r) {
			n++
		}
	}
	if n < MinTokenLen {
		return fault.Fieldf("token", "the bearer token has %d characters other than spaces; want at least %d (e.g. openssl rand -hex 16)", n, MinTokenLen)
	}
	return nil
}

// Memory of request bodies. A JSON body decodes into many times its size
// (8 rows batches of 32 MB at once once held 5.8 GB), so the bytes of the
// bodies being read and decoded at once are bounded, over every handler.
//
// DefaultBodyWait is how long a request waits for room before its 503 by
// default: unread bodies cost nothing but socket buffers, so a burst of
// large batches is queued rather than refused.
const DefaultBodyWait = 30 * time.Second

// limitBodies admits a request with a body once the bytes of the bodies
// in flight leave room for it (its Content-Length, or the body limit when
// the length is unknown), and answers 503 with Retry-After when none is
// made within Options.BodyWait. Multipart uploads stream to disk and are not
// counted.
func (s *Server) limitBodies(next http.Handler) http.Handler {
	return s.limitBodiesUntil(next, false)
}

// limitBodiesRead is limitBodies for a handler that reads its body whole
// into a byte slice and then decodes only a few fields (the LLM proxy):
// once the body is read, its reservation shrinks to twice the bytes read
// (the slice, and the message text decoded from it), so that a long
// exchange such as a stream holds no more than its body costs.
func (s *Server) limitBodiesRead(next http.Handler) http.Handler {
	return s.limitBodiesUntil(next, true)
}

func (s *Server) limitBodiesUntil(next http.Handler, shrinkAtEOF bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 ||
			strings.HasPrefix(strings.ToLower(r.Header.Get("Content-Type")), "multipart/") {
			next.ServeHTTP(w, r)
			return
		}
		n := r.ContentLength
		if n < 0 || n > s.maxBody {
			n = s.maxBody
		}
		wait := s.opts.BodyWait
		if wait <= 0 {
			wait = DefaultBodyWait
		}
		ctx, cancel := context.WithTimeout(r.Context(), wait)
		err := s.bodies.Acquire(ctx, n)
		cancel()
		if err != nil {
			w.Header().Set("Retry-After", "5")
			s.writeJSON(w, http.StatusServiceUnavailable, errorBody{Error: "the server is decoding as many request bodies as its memory allows; retry later"})
			return
		}
		if !shrinkAtEOF {
			defer s.bodies.Release(n)
			next.ServeHTTP(w, r)
			return
		}
		b := &budgetBody{ReadCloser: r.Body, held: n, sem: s.bodies}
		defer b.release(0)
		r.Body = b
		next.ServeHTTP(w, r)
	})
}

// budgetBody is a request body whose reservation among the bodies in
// flight shrinks to twice the bytes read at its end (EOF, an error or
// Close).
type budgetBody struct {
	io.ReadCloser
	sem  *semaphore.Weighted
	mu   sync.Mutex
	held int64 // bytes reserved
	read int64
	done bool
}

func (b *budgetBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.mu.Lock()
	b.read += int64(n)
	read := b.read
	b.mu.Unlock()
	if err != nil {
		b.release(2 * read)
	}
	return n, err
}

func (b *budgetBody) Close() error {
	b.mu.Lock()
	read := b.read
	b.mu.Unlock()
	b.release(2 * read)
	return b.ReadCloser.Close()
}

// release keeps at most keep bytes reserved, once the body is done; 0
// releases them all, as the handler ends.
func (b *budgetBody) release(keep int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done && keep > 0 {
		return
	}
	b.done = true
	if keep < b.held {
		b.sem.Release(b.held - keep)
		b.held = keep
	}
}

// newBodies returns the semaphore of body bytes in flight: limit, at
// least one body of the largest size; 0 means two of them (any number of
// small ones).
func newBodies(limit, maxBody int64) *semaphore.Weighted {
	if limit <= 0 {
		limit = 2 * maxBody
	}
	return semaphore.NewWeighted(max(limit, maxBody))
}

// Sign-in attempts: a token bucket per client address, so that the form
// cannot be used to guess the token at network speed; and one bucket of
// failed attempts for the token itself (the account), so that an attacker
// rotating addresses (or behind the same load balancer as everyone) gets
// no more guesses than loginAccountBurst and one per loginAccountRefill
// over all of them. While the account's bucket is empty, only addresses
// that signed in before (loginKnown of them, for loginKnownFor) may try:
// an attack delays new addresses by at most one refill per failure and
// never locks out an address the token was given from.
const (
	loginBurst   = 10              // attempts at once
	loginRefill  = 6 * time.Second // one more attempt every 6 s
	loginClients = 10_000          // addresses remembered; full buckets are forgotten first

	loginAccountBurst  = 30               // failures over all addresses at once
	loginAccountRefill = 10 * time.Second // one more every 10 s
	loginKnown         = 1000             // addresses that signed in, remembered
	loginKnownFor      = 30 * 24 * time.Hour
)

// loginLimiter holds the buckets of sign-in attempts per client address,
// the account's bucket of failures and the addresses that signed in.
type loginLimiter struct {
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

// allow takes one attempt from addr's bucket at now; when it is empty,
// or the account's bucket of failures is and addr never signed in, it
// returns false and how long until the next attempt.
func (l *loginLimiter) allow(addr string, now time.Time) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.buckets == nil {
		l.buckets = map[string]*bucket{}
		l.known = map[string]time.Time{}
		l.account = &bucket{tokens: loginAccountBurst, at: now}
	}
	b := l.buckets[addr]
	if b == nil {
		if len(l.buckets) >= loginClients {
			l.prune(now)
		}
		b = &bucket{tokens: loginBurst, at: now}
		l.buckets[addr] = b
	}
	b.fill(now, loginBurst, loginRefill)
	if b.tokens < 1 {
		return false, time.Duration((1 - b.tokens) * float64(loginRefill))
	}
	l.account.fill(now, loginAccountBurst, loginAccountRefill)
	if t, ok := l.known[addr]; (!ok || now.Sub(t) > loginKnownFor) && l.account.tokens < 1 {
		return false, time.Duration((1 - l.account.tokens) * float64(loginAccountRefill))
	}
	b.tokens--
	return true, 0
}

// failed counts a wrong token against the account.
func (l *loginLimiter) failed(now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.account.fill(now, loginAccountBurst, loginAccountRefill)
	l.account.tokens = math.Max(0, l.account.tokens-1)
}

// succeeded remembers addr as one the token was given from.
func (l *loginLimiter) succeeded(addr string, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
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
func (l *loginLimiter) prune(now time.Time) {
	for k, b := range l.buckets {
		if b.tokens+float64(now.Sub(b.at))/float64(loginRefill) >= loginBurst {
			delete(l.buckets, k)
		}
	}
	if len(l.buckets) >= loginClients {
		clear(l.buckets)
	}
}

// clientAddr is the address a request came from, without its port. The
// connection's address, never a header a client can write.
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// retryAfter renders a wait for Retry-After, in whole seconds, at least 1.
func retryAfter(d time.Duration) string {
	return strconv.Itoa(max(1, int(math.Ceil(d.Seconds()))))
}

// Disk full. A write that fails for want of space is a 507 with
// Retry-After rather than a 500, and /healthz reports it for a while.
const (
	// diskFullFor is how long /healthz reports a failed write.
	diskFullFor = time.Minute
	// DefaultMaxJobRuntime is serve's default --max-job-runtime: a job
	// that loops or crawls (an input priced within every bound but slow)
	// does not hold a worker forever. Options.Jobs.MaxRuntime itself
	// keeps 0 (no bound) for programs that build a server.
	DefaultMaxJobRuntime = 6 * time.Hour
	// DefaultMinFreeDisk is the default of Options.MinFreeDisk.
	DefaultMinFreeDisk = 64 << 20
)

// diskFull reports whether err is a write that failed for want of space:
// ENOSPC or EDQUOT from the file system, SQLite's SQLITE_FULL, or
// Postgres's disk_full (SQLSTATE 53100).
func diskFull(err error) bool {
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return true
	}
	var pg interface{ SQLState() string }
	if errors.As(err, &pg) && pg.SQLState() == "53100" {
		return true
	}
	// By their text too, for a store that wraps them with %v.
	msg := err.Error()
	return strings.Contains(msg, "database or disk is full") || strings.Contains(msg, "SQLSTATE 53100")
}

// diskState remembers the last write that failed for want of space.
type diskState struct {
	lastFull atomic.Int64 // unix nanoseconds; 0: never
}

func (d *diskState) noteFull(now time.Time) { d.lastFull.Store(now.UnixNano()) }

// fullRecently reports whether a write failed for want of space within
// diskFullFor of now.
func (d *diskState) fullRecently(now time.Time) bool {
	t := d.lastFull.Load()
	return t != 0 && now.Sub(time.Unix(0, t)) < diskFullFor
}
