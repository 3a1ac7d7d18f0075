package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/genlens/genlens/fault"
)

func errorf(format string, a ...any) error { return fmt.Errorf("llm: "+format, a...) }

// DefaultMaxRetries is a good Config.MaxRetries for a shared server: four
// retries with back-off from 500ms ride out about 8 s of overload.
const DefaultMaxRetries = 4

// Bounds of what a command may ask of an endpoint per request, far above
// real use: retries of one request, the timeout of one attempt, and the
// tokens of one answer.
const (
	MaxRetries   = 100
	MaxTimeout   = 60 * time.Minute
	MaxMaxTokens = 1 << 17
)

// Config configures a Client. Zero fields take the defaults in brackets.
type Config struct {
	// BaseURL is the API root, e.g. "http://127.0.0.1:8000/v1"; requests
	// go to BaseURL + "/chat/completions" and so on.
	BaseURL string
	// APIKey is sent as "Authorization: Bearer <key>" when not empty.
	APIKey string
	// Name, when not empty, names the server in errors in place of
	// BaseURL ("llm: POST upstream/chat/completions: 500 ..."), and a
	// transport failure is told without the address it dialled: a proxy's
	// callers read its errors, and its upstream's address is none of
	// their business.
	Name string
	// Timeout bounds each attempt of a request, from sending it to reading
	// the whole response [60s].
	Timeout time.Duration
	// RequestTimeout, when positive, bounds a request as a whole: its
	// attempts, retries and back-off together. A server that never
	// answers then fails the request within it, where Timeout alone
	// allows an attempt and every retry that long.
	RequestTimeout time.Duration
	// MaxRetries is how many times a request is retried after a transient
	// failure; 0 means never. It has no default, since 0 is a setting:
	// DefaultMaxRetries is the command line's.
	MaxRetries int
	// RetryBase is the first back-off delay; it doubles with each retry,
	// up to 30 s, with random jitter, unless the server sends Retry-After
	// [500ms].
	RetryBase time.Duration
	// Concurrency bounds the requests in flight [8].
	Concurrency int
	// RPM, when positive, bounds the rate of HTTP attempts (retries
	// included) to RPM a minute, spaced evenly.
	RPM float64
	// MaxResponseBytes bounds a response body [32 MiB: the embeddings of
	// a hundred samples of a 4096-dimensional model take about 8 MB of
	// text].
	MaxResponseBytes int64
	// HTTPClient, if not nil, replaces the default client (keep-alive
	// transport sized for Concurrency). Its redirect policy is replaced by
	// the same-origin one unless it has its own.
	HTTPClient *http.Client
}

// Client sends requests to one OpenAI-compatible server. It is safe for
// concurrent use.
type Client struct {
	cfg  Config
	base string
	http *http.Client
	// sem is a limiter, not a worker pool: it bounds the requests in
	// flight (Config.Concurrency) across every goroutine that shares the
	// Client, whoever started them.
	sem      chan struct{}
	pace     *pacer
	requests atomic.Int64
	retries  atomic.Int64
}

// ConfigError is a Config that New refuses; Msg says why, without the
// package's prefix, for a caller that names the setting its own way.
type ConfigError struct{ Msg string }

func (e *ConfigError) Error() string { return "llm: " + e.Msg }

func configErrorf(format string, a ...any) error {
	return &ConfigError{Msg: fmt.Sprintf(format, a...)}
}

// New validates cfg and returns a Client; a bad cfg is a *ConfigError.
func New(cfg Config) (*Client, error) {
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, configErrorf("base URL %q: want http(s)://host[:port]/path", redactURL(cfg.BaseURL))
	}
	if u.User != nil {
		return nil, configErrorf("base URL %q: put credentials in the API key, not the URL", redactURL(cfg.BaseURL))
	}
	if cfg.Concurrency == 0 {
		cfg.Concurrency = 8
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 60 * time.Second
	}
	if cfg.RetryBase == 0 {
		cfg.RetryBase = 500 * time.Millisecond
	}
	if cfg.MaxResponseBytes == 0 {
		cfg.MaxResponseBytes = 32 << 20
	}
	switch {
	case cfg.Concurrency < 1:
		return nil, configErrorf("concurrency %d: want at least 1", cfg.Concurrency)
	case cfg.MaxRetries < 0:
		return nil, configErrorf("max retries %d: want 0 or more", cfg.MaxRetries)
	case cfg.Timeout < 0 || cfg.RetryBase < 0 || cfg.RequestTimeout < 0:
		return nil, configErrorf("negative timeout or back-off")
	case !(cfg.RPM >= 0) || cfg.RPM > 1e7:
		return nil, configErrorf("rpm %v: want 0 (no limit) or a positive rate up to 1e7", cfg.RPM)
	case cfg.MaxResponseBytes < 0:
		return nil, configErrorf("max response bytes %d: want a positive size", cfg.MaxResponseBytes)
	}
	c := &Client{cfg: cfg, base: strings.TrimRight(cfg.BaseURL, "/"), http: cfg.HTTPClient, sem: make(chan struct{}, cfg.Concurrency)}
	if cfg.RPM > 0 {
		c.pace = &pacer{interval: time.Duration(float64(time.Minute) / cfg.RPM)}
	}
	if c.http == nil {
		c.http = &http.Client{Transport: &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			DialContext:           (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			ForceAttemptHTTP2:     true,
			MaxIdleConns:          2 * cfg.Concurrency,
			MaxIdleConnsPerHost:   cfg.Concurrency, // one kept-alive connection per request slot
			IdleConnTimeout:       90 * time.Second,
			TLSHandshakeTimeout:   10 * time.Second,
			ExpectContinueTimeout: time.Second,
		}}
	}
	if c.http.CheckRedirect == nil {
		hc := *c.http // never change the caller's client
		hc.CheckRedirect = sameOriginRedirect
		c.http = &hc
	}
	return c, nil
}

// redactURL hides a password in a URL for error messages.
func redactURL(s string) string {
	if u, err := url.Parse(s); err == nil && u.User != nil {
		return u.Redacted()
	}
	return fault.Printable(s, 200)
}

// BaseURL returns the API root requests go to (without a trailing slash).
func (c *Client) BaseURL() string { return c.base }

// Timeout returns the bound of one attempt (Config.Timeout): the one
// timeout of every exchange with this server, including Forward's
// callers' silence bound.
func (c *Client) Timeout() time.Duration { return c.cfg.Timeout }

// Forward sends body to BaseURL + path once, byte for byte, with the
// client's key, transport and redirect policy, and returns the response,
// whatever its status, for the caller to read and close. It is a proxy's
// pass-through: it does not retry (a streamed answer cannot be replayed
// to whoever reads it), is not counted in Concurrency or RPM (the
// proxy's own callers are its bound), and sets no deadline of its own:
// ctx bounds it, so that the caller decides how long a stream may stay
// silent. A transport failure is returned as the *url.Error of
// net/http.
func (c *Client) Forward(ctx context.Context, path string, body []byte, accept string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+path, bytes.NewReader(body))
	if err != nil {
		return nil, errorf("%v", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	if c.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
	return c.http.Do(req)
}

// Stats returns the number of HTTP attempts made and how many of them were
// retries.
func (c *Client) Stats() (requests, retries int64) { return c.requests.Load(), c.retries.Load() }

// sameOriginRedirect follows at most three redirects, and only within the
// origin (scheme, host and port) of the first request: a redirect
// elsewhere would re-send the prompt, and a bearer key on the same host
// but another port, to wherever a server points.
func sameOriginRedirect(req *http.Request, via []*http.Request) error {
	first := via[0].URL
	if req.URL.Scheme != first.Scheme || req.URL.Host != first.Host {
		return &redirectError{fmt.Sprintf("refusing a redirect from %s://%s to another origin, %s://%s: set the base URL to the server that answers",
			first.Scheme, first.Host, req.URL.Scheme, req.URL.Host)}
	}
	if len(via) > 3 {
		return &redirectError{"more than 3 redirects"}
	}
	return nil
}

// redirectError is a redirect the client refuses to follow.
type redirectError struct{ msg string }

func (e *redirectError) Error() string { return e.msg }

// StatusError is a response with a status other than 200 OK.
type StatusError struct {
	Endpoint   string // "POST http://host/v1/chat/completions"
	StatusCode int
	Status     string // "429 Too Many Requests"
	// Message is the server's error message (of an OpenAI-style error
	// body), or a prefix of the body, clipped and with control characters
	// escaped.
	Message string
}

func (e *StatusError) Error() string {
	s := "llm: " + e.Endpoint + ": " + e.Status
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// Transient reports whether the status is worth retrying: 408, 429, 5xx.
func (e *StatusError) Transient() bool {
	return e.StatusCode == http.StatusRequestTimeout || e.StatusCode == http.StatusTooManyRequests || e.StatusCode >= 500
}

// transientError marks failures worth retrying.
type transientError struct{ err error }

func (e *transientError) Error() string { return e.err.Error() }
func (e *transientError) Unwrap() error { return e.err }

// Post sends body (JSON-encoded; a []byte or json.RawMessage is sent as
// it is) to BaseURL + path, retrying transient failures, and decodes the
// 200 response into out (skipped when out is nil). A non-200 final answer
// is a *StatusError.
func (c *Client) Post(ctx context.Context, path string, body, out any) error {
	_, err := c.post(ctx, path, body, out, 0)
	return err
}

// post is Post with a bound of the response (limit; 0: the client's
// MaxResponseBytes), returning the bytes of the final response's body.
func (c *Client) post(ctx context.Context, path string, body, out any, limit int64) (int64, error) {
	if d := c.cfg.RequestTimeout; d > 0 {
		parent := ctx
		ctx, cancel := context.WithTimeout(ctx, d)
		defer cancel()
		n, err := c.postAttempts(ctx, path, body, out, limit)
		if err != nil && parent.Err() == nil && ctx.Err() != nil {
			return 0, errorf("%s: no complete response within %v, retries included", c.where(path), d)
		}
		return n, err
	}
	return c.postAttempts(ctx, path, body, out, limit)
}

// postAttempts is post within ctx alone.
func (c *Client) postAttempts(ctx context.Context, path string, body, out any, limit int64) (int64, error) {
	if limit <= 0 {
		limit = c.cfg.MaxResponseBytes
	}
	var data []byte
	switch b := body.(type) {
	case []byte:
		data = b
	case json.RawMessage:
		data = b
	default:
		var err error
		if data, err = json.Marshal(body); err != nil {
			return 0, errorf("encoding request: %v", err)
		}
	}
	endpoint, where := c.base+path, c.where(path)
	for attempt := 0; ; attempt++ {
		wait, n, err := c.attempt(ctx, endpoint, where, data, out, limit)
		if err == nil {
			return n, nil
		}
		var te *transientError
		if !errors.As(err, &te) || attempt >= c.cfg.MaxRetries || ctx.Err() != nil {
			if errors.As(err, &te) && attempt > 0 {
				return 0, fmt.Errorf("%w (gave up after %d attempts)", err, attempt+1)
			}
			return 0, err
		}
		if wait <= 0 {
			wait = c.backoff(attempt)
		}
		c.retries.Add(1)
		if err := sleep(ctx, wait); err != nil {
			return 0, err
		}
	}
}

// where names a request to path in errors: "POST " and the URL, or the
// client's Name in place of its base URL.
func (c *Client) where(path string) string {
	if c.cfg.Name != "" {
		return "POST " + c.cfg.Name + path
	}
	return "POST " + c.base + path
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// backoff is RetryBase·2^attempt, capped at 30 s, with jitter in [½, 1] of
// that so that clients retrying together spread out.
func (c *Client) backoff(attempt int) time.Duration {
	d := c.cfg.RetryBase << min(attempt, 16)
	d = min(d, 30*time.Second)
	return d/2 + time.Duration(rand.Int64N(int64(d/2)+1))
}

// pacer spaces attempts interval apart: a rate limit without bursts.
type pacer struct {
	interval time.Duration
	mu       sync.Mutex
	next     time.Time
}

// wait blocks until the caller's slot, which it reserves.
func (p *pacer) wait(ctx context.Context) error {
	p.mu.Lock()
	now := time.Now()
	at := p.next
	if at.Before(now) {
		at = now
	}
	p.next = at.Add(p.interval)
	p.mu.Unlock()
	return sleep(ctx, time.Until(at))
}

// attempt makes one HTTP request, reading at most limit bytes of its
// response. It returns the server's Retry-After delay when it sent one,
// and the bytes of the response's body.
func (c *Client) attempt(ctx context.Context, endpoint, where string, body []byte, out any, limit int64) (time.Duration, int64, error) {
	select {
	case c.sem <- struct{}{}:
	case <-ctx.Done():
		return 0, 0, ctx.Err()
	}
	defer func() { <-c.sem }()
	if c.pace != nil {
		if err := c.pace.wait(ctx); err != nil {
			return 0, 0, err
		}
	}
	c.requests.Add(1)

	actx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return 0, 0, errorf("%v", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if c.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
	failed := func(err error) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if errors.Is(err, context.DeadlineExceeded) {
			return &transientError{errorf("%s: no complete response within %v", where, c.cfg.Timeout)}
		}
		if re := (*redirectError)(nil); errors.As(err, &re) {
			return errorf("%s: %s", where, re.msg) // retrying cannot help
		}
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return &transientError{errorf("%s: response cut off before its end", where)}
		}
		return &transientError{errorf("%s: %v", where, c.cause(err))}
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, 0, failed(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return 0, 0, failed(err)
	}
	n := int64(len(data))
	if n > limit {
		return 0, 0, &SizeError{Where: where, Limit: limit}
	}
	if resp.StatusCode != http.StatusOK {
		se := &StatusError{Endpoint: where, StatusCode: resp.StatusCode, Status: resp.Status, Message: serverMessage(RedactBytes(data, c.secrets()))}
		if se.Transient() {
			return retryAfter(resp.Header.Get("Retry-After")), 0, &transientError{se}
		}
		return 0, 0, se
	}
	if out == nil {
		return 0, n, nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return 0, 0, errorf("%s: malformed JSON response (%v): %s", where, err, fault.Printable(Redact(string(data), c.secrets()), 120))
	}
	return 0, n, nil
}

// cause is err, a transport failure, as errors tell it: whole, or, when
// the client is named (Config.Name), without the URL and the address the
// *url.Error and *net.OpError inside it carry.
func (c *Client) cause(err error) error {
	if c.cfg.Name == "" {
		return err
	}
	if ue := (*url.Error)(nil); errors.As(err, &ue) {
		err = ue.Err
	}
	if oe := (*net.OpError)(nil); errors.As(err, &oe) {
		return fmt.Errorf("%s: %w", oe.Op, oe.Err)
	}
	return err
}

// secrets are the texts the client's errors never carry: its key, which
// a server may echo from the Authorization header.
func (c *Client) secrets() []string {
	if c.cfg.APIKey == "" {
		return nil
	}
	return []string{c.cfg.APIKey}
}

// serverMessage extracts the message of an OpenAI-style error body, or a
// short prefix of any other body.
func serverMessage(data []byte) string {
	var e ErrorResponse
	if json.Unmarshal(data, &e) == nil && e.Error != nil && e.Error.Message != "" {
		return fault.Printable(e.Error.Message, 300)
	}
	return fault.Printable(strings.TrimSpace(string(data)), 120)
}

// retryAfter reads a Retry-After header in seconds or as an HTTP date,
// capped at one minute.
func retryAfter(h string) time.Duration {
	if h == "" {
		return 0
	}
	var d time.Duration
	if s, err := strconv.Atoi(strings.TrimSpace(h)); err == nil {
		d = time.Duration(s) * time.Second
	} else if t, err := http.ParseTime(h); err == nil {
		d = time.Until(t)
	}
	return min(max(d, 0), time.Minute)
}

// Redact returns s with every occurrence of the client's key replaced:
// an upstream that echoes its Authorization header in an error must not
// hand the key to whoever reads the error.
func (c *Client) Redact(s string) string { return Redact(s, c.Secrets()) }

// Secrets returns what Redact hides (the key, when there is one), for a
// caller that passes the client's traffic on and redacts it with its own
// secrets.
func (c *Client) Secrets() []string {
	if c.cfg.APIKey == "" {
		return nil
	}
	return []string{c.cfg.APIKey}
}
