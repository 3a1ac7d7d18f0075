package openai

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
	"sync/atomic"
	"time"
)

// ErrNoLogprobs is returned (wrapped) when the server answers without the
// token log-probabilities the estimators need.
var ErrNoLogprobs = errors.New("server returned no token log-probabilities")

func errorf(format string, a ...any) error { return fmt.Errorf("openai: "+format, a...) }

// DefaultMaxRetries is a good Config.MaxRetries for a shared server: four
// retries with back-off from 500ms ride out about 8 s of overload.
const DefaultMaxRetries = 4

// Config configures a Client. Zero fields take the defaults in brackets.
type Config struct {
	// BaseURL is the API root, e.g. "http://127.0.0.1:8000/v1";
	// requests go to BaseURL + "/completions".
	BaseURL string
	// Model is the "model" field of every request.
	Model string
	// APIKey is sent as "Authorization: Bearer <key>" when not empty.
	APIKey string

	// Timeout bounds each attempt of a request, from sending it to reading
	// the whole response [60s].
	Timeout time.Duration
	// MaxRetries is how many times a request is retried after a transient
	// failure (408, 429, 5xx, timeout, connection error); 0 means never.
	// It has no default, since 0 is a setting: DefaultMaxRetries is the
	// command line's.
	MaxRetries int
	// RetryBase is the first back-off delay; it doubles with each retry,
	// up to 30 s, with random jitter, unless the server sends Retry-After
	// [500ms].
	RetryBase time.Duration
	// Concurrency bounds the requests in flight [8].
	Concurrency int

	// MaxTokens bounds a generated response (one label line) [16].
	MaxTokens int
	// PairMaxTokens bounds a generated imagined example [200, the paper's
	// max_new_tokens].
	PairMaxTokens int
	// PairTopP is the nucleus of imagined-example generation [1: the
	// model's own distribution; the paper used 0.9].
	PairTopP float64
	// EchoMaxTokens is max_tokens of the scoring requests [1: some servers
	// reject 0; the generated token is ignored].
	EchoMaxTokens int
	// NoSeed leaves out the per-request "seed" field, for servers that
	// reject it.
	NoSeed bool

	// MaxResponseBytes bounds a response body [4 MiB]. Decoded JSON
	// takes about ten times its text, and a completion of a few tokens
	// with log-probabilities is a few kilobytes.
	MaxResponseBytes int64
	// HTTPClient, if not nil, replaces the default client (keep-alive
	// transport sized for Concurrency).
	HTTPClient *http.Client
}

// Client talks to one model behind an OpenAI-compatible completions
// endpoint. It implements hallucination.CGM over text and is safe for
// concurrent use.
type Client struct {
	cfg      Config
	endpoint string
	http     *http.Client
	// sem is a limiter, not a worker pool: it bounds the requests in
	// flight (Config.Concurrency) across every goroutine that shares the
	// Client, whoever started them.
	sem      chan struct{}
	requests atomic.Int64
	retries  atomic.Int64
}

// New validates cfg and returns a Client.
func New(cfg Config) (*Client, error) {
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errorf("base URL %q: want http(s)://host[:port]/path", cfg.BaseURL)
	}
	if cfg.Model == "" {
		return nil, errorf("no model name")
	}
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&cfg.Concurrency, 8)
	def(&cfg.MaxTokens, 16)
	def(&cfg.PairMaxTokens, 200)
	def(&cfg.EchoMaxTokens, 1)
	if cfg.Timeout == 0 {
		cfg.Timeout = 60 * time.Second
	}
	if cfg.RetryBase == 0 {
		cfg.RetryBase = 500 * time.Millisecond
	}
	if cfg.PairTopP == 0 {
		cfg.PairTopP = 1
	}
	if cfg.MaxResponseBytes == 0 {
		cfg.MaxResponseBytes = 4 << 20
	}
	switch {
	case cfg.Concurrency < 1:
		return nil, errorf("concurrency %d: want at least 1", cfg.Concurrency)
	case cfg.MaxRetries < 0:
		return nil, errorf("max retries %d: want 0 or more", cfg.MaxRetries)
	case cfg.Timeout < 0 || cfg.RetryBase < 0:
		return nil, errorf("negative timeout or back-off")
	case cfg.MaxTokens < 1 || cfg.PairMaxTokens < 1 || cfg.EchoMaxTokens < 0:
		return nil, errorf("token limits %d/%d/%d: want positive values", cfg.MaxTokens, cfg.PairMaxTokens, cfg.EchoMaxTokens)
	case !(cfg.PairTopP > 0 && cfg.PairTopP <= 1):
		return nil, errorf("pair top_p %v: want a value in (0, 1]", cfg.PairTopP)
	}
	c := &Client{cfg: cfg, endpoint: strings.TrimRight(cfg.BaseURL, "/") + "/completions", http: cfg.HTTPClient, sem: make(chan struct{}, cfg.Concurrency)}
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

// Stats returns the number of HTTP attempts made and how many of them were
// retries.
func (c *Client) Stats() (requests, retries int64) { return c.requests.Load(), c.retries.Load() }

// Complete sends one completions request (Model filled in), retrying
// transient failures, and returns the decoded response. It fails when the
// response has no choices.
func (c *Client) Complete(ctx context.Context, req CompletionRequest) (*CompletionResponse, error) {
	req.Model = c.cfg.Model
	body, err := json.Marshal(req)
	if err != nil {
		return nil, errorf("encoding request: %v", err)
	}
	for attempt := 0; ; attempt++ {
		resp, wait, err := c.attempt(ctx, body)
		if err == nil {
			return resp, nil
		}
		var te *transientError
		if !errors.As(err, &te) || attempt >= c.cfg.MaxRetries || ctx.Err() != nil {
			if errors.As(err, &te) && attempt > 0 {
				return nil, fmt.Errorf("%w (gave up after %d attempts)", err, attempt+1)
			}
			return nil, err
		}
		if wait <= 0 {
			wait = c.backoff(attempt)
		}
		c.retries.Add(1)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

// backoff is RetryBase·2^attempt, capped at 30 s, with full jitter in
// [½, 1] of that so that clients retrying together spread out.
func (c *Client) backoff(attempt int) time.Duration {
	d := c.cfg.RetryBase << min(attempt, 16)
	d = min(d, 30*time.Second)
	return d/2 + time.Duration(rand.Int64N(int64(d/2)+1))
}

// transientError marks failures worth retrying.
type transientError struct{ err error }

func (e *transientError) Error() string { return e.err.Error() }
func (e *transientError) Unwrap() error { return e.err }

// attempt makes one HTTP request. It returns the server's Retry-After
// delay when it sent one.
func (c *Client) attempt(ctx context.Context, body []byte) (*CompletionResponse, time.Duration, error) {
	select {
	case c.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, 0, ctx.Err()
	}
	defer func() { <-c.sem }()
	c.requests.Add(1)

	actx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, 0, errorf("%v", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if c.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
	where := "POST " + c.endpoint
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
		return &transientError{errorf("%s: %v", where, err)}
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, 0, failed(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, c.cfg.MaxResponseBytes+1))
	if err != nil {
		return nil, 0, failed(err)
	}
	if int64(len(data)) > c.cfg.MaxResponseBytes {
		return nil, 0, errorf("%s: response larger than %d bytes", where, c.cfg.MaxResponseBytes)
	}
	if resp.StatusCode != http.StatusOK {
		err := errorf("%s: %s%s", where, resp.Status, serverMessage(data))
		switch code := resp.StatusCode; {
		case code == http.StatusRequestTimeout || code == http.StatusTooManyRequests || code >= 500:
			return nil, retryAfter(resp.Header.Get("Retry-After")), &transientError{err}
		}
		return nil, 0, err
	}
	var out CompletionResponse
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, 0, errorf("%s: malformed JSON response (%v): %s", where, err, printable(string(data), 120))
	}
	if len(out.Choices) == 0 {
		return nil, 0, errorf("%s: response has no choices", where)
	}
	return &out, 0, nil
}

// serverMessage extracts the message of an OpenAI-style error body, or a
// short prefix of any other body.
func serverMessage(data []byte) string {
	var e ErrorResponse
	if json.Unmarshal(data, &e) == nil && e.Error.Message != "" {
		return ": " + printable(e.Error.Message, 300)
	}
	if s := strings.TrimSpace(string(data)); s != "" {
		return ": " + printable(s, 120)
	}
	return ""
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
