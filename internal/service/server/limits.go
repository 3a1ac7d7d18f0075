package server

import (
	"context"
	"errors"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// Memory of request bodies (membudget.Bodies).
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
// once the body is read, its room shrinks to twice the bytes read
// (membudget.Bodies.AcquireRead).
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
		wait := s.opts.BodyWait
		if wait <= 0 {
			wait = DefaultBodyWait
		}
		ctx, cancel := context.WithTimeout(r.Context(), wait)
		var release func()
		var err error
		if shrinkAtEOF {
			r.Body, release, err = s.bodies.AcquireRead(ctx, r.Body, r.ContentLength)
		} else {
			release, err = s.bodies.Acquire(ctx, r.ContentLength)
		}
		cancel()
		if err != nil {
			w.Header().Set("Retry-After", "5")
			s.writeJSON(w, http.StatusServiceUnavailable, errorBody{Error: "the server is decoding as many request bodies as its memory allows; retry later"})
			return
		}
		defer release()
		next.ServeHTTP(w, r)
	})
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
