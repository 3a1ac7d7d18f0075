package server

// Hooks. This file, auth, errors, metrics, monitors and the dashboard are
// the service core. The jobs, uploads and online selections (package
// jobrun behind them) live in server/jobs.go, server/files.go and
// server/selections.go, and plug in through these methods, which those
// files declare:
//
//	type JobOptions struct{ ... }            // Options.Jobs: what New needs for jobs
//	type jobsState struct{ ... }             // Server.jobs: runner, queue, uploads
//	func (s *Server) initJobs(ctx context.Context) error  // from New, after the store opened
//	func (s *Server) closeJobs(ctx context.Context) error // from Close/Shutdown
//	func (s *Server) routeJobs(mux *http.ServeMux)        // /api/v1/jobs...
//	func (s *Server) routeFiles(mux *http.ServeMux)       // /api/v1/files...
//	func (s *Server) routeSelections(mux *http.ServeMux)  // /api/v1/selections...
//	func (s *Server) routeStats(mux *http.ServeMux)       // /api/v1/stats... (stats.go)
//	func (s *Server) dashboardJobs(ctx context.Context) ([]JobView, error)
//	func (s *Server) dashboardSelections(ctx context.Context) ([]SelectionView, error)
//
// The LLM proxy (package llmproxy; llm.go, llmrequests.go, llmdash.go
// here) hangs on the same way: newLLMProxy from New, its route on the
// outer mux with its own auth (OpenAI's error shape), its recorder
// drained by Close.
//
// Routes registered there get auth, body limits, latency metrics and the
// error mapping of this file for free (handlers are wrapped in routes).
// Use s.writeJSON, s.writeError (fault.Classify → status), s.decodeJSON
// (size-limited, unknown fields refused) and s.metrics (queue depth,
// selection gauges).

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/format/strictjson"
	"github.com/genlens/genlens/internal/service/llmproxy"
	"github.com/genlens/genlens/internal/service/monitorsvc"
	"github.com/genlens/genlens/internal/service/statsvc"
	"github.com/genlens/genlens/internal/signin"
	"github.com/genlens/genlens/internal/store"
	"github.com/genlens/genlens/internal/store/records"
	"github.com/genlens/genlens/internal/tensor/membudget"
)

// Limits of request bodies: JSON requests and rows batches. Uploads
// (multipart) have their own limit in files.go.
const (
	DefaultMaxBody = 32 << 20 // a batch of 10,000 rows of 100 features is about 20 MB of JSON
)

// Options configure a Server.
type Options struct {
	// Store holds monitors, rows, labels, jobs and selections.
	Store *store.DB
	// Token, when not empty, is the bearer token every endpoint but
	// /livez and /healthz requires: at least signin.MinTokenLen characters other than
	// spaces (see signin.CheckToken). Surrounding white space is not part of it.
	Token string
	// MaxBody bounds a JSON request body in bytes; 0 means DefaultMaxBody.
	MaxBody int64
	// MaxBodiesInFlight bounds the bytes of request bodies read and
	// decoded at once, over all handlers (at least MaxBody); a request
	// that finds no room within BodyWait gets 503 with Retry-After. 0
	// means 2 × MaxBody.
	MaxBodiesInFlight int64
	// BodyWait is how long a request waits for room among the bodies in
	// flight; 0 means DefaultBodyWait (30 s).
	BodyWait time.Duration
	// MinFreeDisk is the free space of the data directory below which
	// /healthz reports the disk as full; 0 means DefaultMinFreeDisk.
	MinFreeDisk int64
	// Logger receives one line per failed request and lifecycle events;
	// nil discards them.
	Logger *slog.Logger
	// Jobs configures the job runner (declared in jobs.go).
	Jobs JobOptions
	// LLM configures the OpenAI-compatible uncertainty proxy at
	// /v1/chat/completions (llm.go); off without a Client.
	LLM LLMOptions
	// Secrets are texts that never leave the service: the values of the
	// jobs' secret variables (SecretValues). The proxy replaces each, and
	// LLM.APIKey, by "[redacted]" in its answers, records and log.
	Secrets []string
	// Now returns the current time; nil means time.Now. Tests set it to
	// decide whether the last period chunk is complete.
	Now func() time.Time
}

// Server is the genlens service: the HTTP API of /api/v1, /metrics,
// /livez, /healthz and the dashboard at /. It holds no state of its own beyond
// caches: everything lives in the store, so that several replicas can
// serve one Postgres database.
type Server struct {
	store    *store.DB
	token    []byte
	maxBody  int64
	log      *slog.Logger
	now      func() time.Time
	metrics  *metrics
	jobs     jobsState
	opts     Options
	handler  http.Handler
	monitors *monitorsvc.Service
	llm      *llmproxy.Proxy // nil without an upstream
	stats    *statsvc.Service

	bodies  *membudget.Bodies // bytes of request bodies in flight
	logins  signin.Limiter
	disk    diskState
	dataDir string // the uploads' directory, whose free space /healthz checks
}

// New returns a Server over opts.Store, which must be open (migrations
// applied by store.Open).
func New(ctx context.Context, opts Options) (*Server, error) {
	if opts.Store == nil {
		return nil, errors.New("server: no store")
	}
	// A token read from a file or a Kubernetes secret often ends with a
	// newline that no client sends; so may the upstream's key.
	// A token of white space only is refused, not taken for none.
	given := opts.Token != ""
	opts.Token, opts.LLM.APIKey = strings.TrimSpace(opts.Token), strings.TrimSpace(opts.LLM.APIKey)
	s := &Server{store: opts.Store, maxBody: opts.MaxBody, log: opts.Logger, now: opts.Now, opts: opts}
	if given {
		if err := signin.CheckToken(opts.Token); err != nil {
			return nil, err
		}
		// A token read from a file or a Kubernetes secret often ends in a
		// newline that no caller sends.
		s.token = []byte(strings.TrimSpace(opts.Token))
	}
	if s.maxBody <= 0 {
		s.maxBody = DefaultMaxBody
	}
	s.bodies = membudget.NewBodies(opts.MaxBodiesInFlight, s.maxBody)
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	s.metrics = newMetrics(s)
	s.stats = statsvc.New(s.store, s.now)
	s.monitors = monitorsvc.New(s.store, s.now)
	if opts.LLM.Upstream != "" && opts.LLM.Client == nil && opts.LLM.Sampler == nil {
		c, err := llmproxy.NewClient(opts.LLM.Upstream, opts.LLM.APIKey, opts.LLM.Timeout)
		if err != nil {
			return nil, fault.Fieldf("llm_upstream", "{llm_upstream}: %v", err)
		}
		opts.LLM.Client = c
	}
	if opts.LLM.Client != nil || opts.LLM.Sampler != nil {
		var err error
		if s.llm, err = s.newLLMProxy(opts.LLM); err != nil {
			return nil, err
		}
	}
	if err := s.initJobs(ctx); err != nil {
		return nil, err
	}
	s.handler = s.routes()
	return s, nil
}

// Handler returns the service's HTTP handler.
func (s *Server) Handler() http.Handler { return s.handler }

// Close stops the job runner and stores the LLM proxy's queued
// requests; the store is the caller's to close.
func (s *Server) Close(ctx context.Context) error {
	err := s.closeJobs(ctx)
	if s.llm != nil {
		err = errors.Join(err, s.llm.Close(ctx))
	}
	return err
}

// HTTPServer returns an http.Server for addr with a timeout on every
// phase of a connection, so that a slow client (slow-loris) cannot hold
// connections open: headers within 10 s, the whole request within 2 min
// (a large rows batch or upload over a slow link), the response within
// 2 min, idle keep-alive connections closed after 2 min.
func (s *Server) HTTPServer(addr string) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           s.handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       2 * time.Minute,
		WriteTimeout:      2 * time.Minute,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
}

// routes builds the mux. Every route but /livez and /healthz needs the
// token when one is set; every route is timed for the latency histogram
// under its pattern (never the raw path, whose ids would make unbounded
// labels).
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /livez", s.livez)
	mux.HandleFunc("GET /healthz", s.healthz)
	s.routePublic(mux)
	if s.llm != nil {
		s.routeLLM(mux) // its own auth: OpenAI's error shape
	}
	api := http.NewServeMux()
	api.Handle("GET /metrics", s.metrics.handler())
	api.HandleFunc("GET /api/v1/openapi.yaml", s.openAPI)
	s.routeMonitors(api)
	s.routeDashboard(api)
	s.routeJobs(api)
	s.routeFiles(api)
	s.routeSelections(api)
	s.routeStats(api)
	api.HandleFunc("GET /api/v1/llm/requests", s.llmRequests)
	mux.Handle("/", s.auth(s.limitBodies(api)))
	return s.instrument(mux)
}

// livez answers 200 while the process serves HTTP, whatever the store
// and the disk: it is the liveness probe, which restarts the process when
// it fails, and a restart mends neither a database that is down nor a
// full disk (/healthz, the readiness probe, reports those). No token.
func (s *Server) livez(w http.ResponseWriter, r *http.Request) {
	s.writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// healthz answers 200 when the store answers and the disk has room, 503
// otherwise; it needs no token, so that load balancers can probe it, and
// so says no more than "unavailable" and which part failed: the store's
// error names users, hosts and databases, and goes to the log.
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if err := s.store.Ping(ctx); err != nil {
		s.log.Error("healthz: the store does not answer", "err", err)
		s.writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable", "store": "unavailable"})
		return
	}
	if s.diskLow() {
		s.writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable", "store": s.store.Backend(), "disk": "full"})
		return
	}
	s.writeJSON(w, http.StatusOK, map[string]string{"status": "ok", "store": s.store.Backend()})
}

// diskLow reports whether a write failed for want of space within the
// last minute, or the data directory has less than MinFreeDisk free.
func (s *Server) diskLow() bool {
	if s.disk.fullRecently(s.now()) {
		return true
	}
	min := s.opts.MinFreeDisk
	if min <= 0 {
		min = DefaultMinFreeDisk
	}
	if s.dataDir == "" {
		return false
	}
	free, ok := freeBytes(s.dataDir)
	if ok && free < uint64(min) {
		s.log.Warn("healthz: little free space", "dir", s.dataDir, "free_bytes", free, "min_free_bytes", min)
		return true
	}
	return false
}

// auth requires "Authorization: Bearer <token>" (scheme in any case)
// when a token is set, compared in constant time. A browser's GET may
// carry the token in the dashboard's cookie instead (set by /login); an
// HTML request without it is sent to the sign-in form. Wrong tokens are
// limited as the sign-in form's are (see authorize).
func (s *Server) auth(next http.Handler) http.Handler {
	if s.token == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch status, wait := s.authorize(r); status {
		case http.StatusOK:
			next.ServeHTTP(w, r)
		case http.StatusTooManyRequests:
			w.Header().Set("Retry-After", retryAfter(wait))
			s.writeJSON(w, status, errorBody{Error: "too many wrong bearer tokens from this address; retry after " + retryAfter(wait) + " s"})
		default:
			w.Header().Set("WWW-Authenticate", `Bearer realm="genlens"`)
			if r.Method == http.MethodGet && strings.Contains(r.Header.Get("Accept"), "text/html") {
				http.Redirect(w, r, "/login", http.StatusSeeOther)
				return
			}
			s.writeJSON(w, http.StatusUnauthorized, errorBody{Error: "missing or wrong bearer token"})
		}
	})
}

// authorize says whether r carries the token: 200, 401, or 429 with the
// wait when its address sent too many wrong ones (the sign-in form's
// limiter, which counts only the failures here, so that a client holding
// the token never runs out). The limit is asked before the token is
// compared: an address over it learns nothing of its guesses. A request
// without any token is not a guess and is not counted.
func (s *Server) authorize(r *http.Request) (int, time.Duration) {
	addr, now := clientAddr(r), s.now()
	if wait := s.logins.Wait(addr, now); wait > 0 {
		return http.StatusTooManyRequests, wait
	}
	ok, sent := s.authorized(r)
	switch {
	case ok:
		s.logins.Succeeded(addr, now)
		return http.StatusOK, 0
	case sent:
		s.logins.FailedFrom(addr, now)
	}
	return http.StatusUnauthorized, 0
}

// authorized says whether r carries the token, and whether it carries
// any.
func (s *Server) authorized(r *http.Request) (ok, sent bool) {
	h := r.Header.Get("Authorization")
	if h == "" && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
		if c, err := r.Cookie(tokenCookie); err == nil {
			return subtle.ConstantTimeCompare([]byte(c.Value), s.token) == 1, true
		}
	}
	if h == "" {
		return false, false
	}
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "bearer") {
		return false, true
	}
	return subtle.ConstantTimeCompare([]byte(strings.TrimSpace(tok)), s.token) == 1, true
}

// errorBody is every error response: the message, and the request field
// or input row at fault when there is one.
type errorBody struct {
	Error string `json:"error"`
	Kind  string `json:"kind,omitempty"`
	Field string `json:"field,omitempty"`
	Index *int   `json:"index,omitempty"` // 0-based position in the batch's array
	ID    string `json:"id,omitempty"`    // the row id at fault
}

// httpError is an error with its own status (404, 409, 413, ...), for
// the failures that are not a job's.
type httpError struct {
	status int
	body   errorBody
}

func (e *httpError) Error() string { return e.body.Error }

func errStatus(status int, format string, a ...any) *httpError {
	return &httpError{status: status, body: errorBody{Error: fmt.Sprintf(format, a...)}}
}

// writeError maps err to its status once: an *httpError carries its own,
// records.ErrNotFound is 404, a store.ConflictError 409, and everything
// else goes by fault.Classify (field 400, input 422, canceled 499,
// internal 500). Internal messages are logged and replaced by a generic
// one: they may name paths or DSNs a client must not see.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	var he *httpError
	var fe *fault.FieldError
	var mbe *http.MaxBytesError
	var busy *membudget.BusyError
	switch {
	case errors.As(err, &he):
		s.writeJSON(w, he.status, he.body)
		return
	case errors.As(err, &busy):
		// Work that fits its budget but not beside what the process
		// holds now: refused before it allocates, retried later.
		w.Header().Set("Retry-After", "10")
		s.writeJSON(w, http.StatusServiceUnavailable, errorBody{Error: busy.Error(), Kind: "busy"})
		return
	case errors.As(err, &mbe):
		s.writeJSON(w, http.StatusRequestEntityTooLarge, errorBody{Error: fmt.Sprintf("request body over %d bytes", mbe.Limit)})
		return
	case errors.Is(err, records.ErrNotFound):
		s.writeJSON(w, http.StatusNotFound, errorBody{Error: err.Error()})
		return
	case errors.Is(err, records.ErrConflict):
		s.writeJSON(w, http.StatusConflict, errorBody{Error: err.Error()})
		return
	case diskFull(err):
		s.disk.noteFull(s.now())
		s.log.Error("request failed: disk full", "method", r.Method, "path", r.URL.Path, "err", err)
		w.Header().Set("Retry-After", "60")
		s.writeJSON(w, http.StatusInsufficientStorage, errorBody{Error: "the server's disk is full; retry later"})
		return
	}
	k := fault.Classify(err)
	body := errorBody{Error: err.Error(), Kind: k.String()}
	if errors.As(err, &fe) {
		body.Field = fe.Field
	}
	if k == fault.KindInternal {
		s.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
		body.Error = "internal error (logged by the server)"
	}
	s.writeJSON(w, k.HTTPStatus(), body)
}

// writeJSON writes v as the response with status.
func (s *Server) writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		s.log.Error("encoding a response", "err", err)
		http.Error(w, `{"error":"internal error"}`, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)+1))
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// decodeJSON reads one JSON document of at most s.maxBody bytes into v
// through strictjson: unknown fields and trailing data are refused. Its
// errors are *fault.FieldError (400) or *http.MaxBytesError (413).
func (s *Server) decodeJSON(w http.ResponseWriter, r *http.Request, v any) error {
	return strictjson.Decode(http.MaxBytesReader(w, r.Body, s.maxBody), v)
}

// pathID parses the {id} path value of r, an id of a noun ("monitor").
func pathID(r *http.Request, name, noun string) (int64, error) {
	v := r.PathValue(name)
	id, err := strconv.ParseInt(v, 10, 64)
	if err != nil || id < 1 {
		return 0, errStatus(http.StatusNotFound, "no %s %q", noun, v)
	}
	return id, nil
}

// IsLoopback reports whether addr (host:port) listens only on a loopback
// interface; an empty host (all interfaces) is not loopback, nor is a
// name other than localhost.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil || host == "" {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
