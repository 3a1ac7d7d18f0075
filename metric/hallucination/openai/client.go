package openai

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/genlens/genlens/llm"
)

// ErrNoLogprobs is returned (wrapped) when the server answers without the
// token log-probabilities the estimators need.
var ErrNoLogprobs = errors.New("server returned no token log-probabilities")

func errorf(format string, a ...any) error { return fmt.Errorf("openai: "+format, a...) }

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
	cfg Config
	llm *llm.Client
}

// New validates cfg and returns a Client.
func New(cfg Config) (*Client, error) {
	if cfg.MaxResponseBytes == 0 {
		cfg.MaxResponseBytes = 4 << 20
	}
	lc, err := llm.New(llm.Config{BaseURL: cfg.BaseURL, APIKey: cfg.APIKey, Timeout: cfg.Timeout, MaxRetries: cfg.MaxRetries,
		RetryBase: cfg.RetryBase, Concurrency: cfg.Concurrency, MaxResponseBytes: cfg.MaxResponseBytes, HTTPClient: cfg.HTTPClient})
	if err != nil {
		if ce := (*llm.ConfigError)(nil); errors.As(err, &ce) {
			return nil, errorf("%s", ce.Msg)
		}
		return nil, err
	}
	if cfg.Model == "" {
		return nil, errorf("no model name")
	}
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&cfg.MaxTokens, 16)
	def(&cfg.PairMaxTokens, 200)
	def(&cfg.EchoMaxTokens, 1)
	if cfg.PairTopP == 0 {
		cfg.PairTopP = 1
	}
	switch {
	case cfg.MaxTokens < 1 || cfg.PairMaxTokens < 1 || cfg.EchoMaxTokens < 0:
		return nil, errorf("token limits %d/%d/%d: want positive values", cfg.MaxTokens, cfg.PairMaxTokens, cfg.EchoMaxTokens)
	case !(cfg.PairTopP > 0 && cfg.PairTopP <= 1):
		return nil, errorf("pair top_p %v: want a value in (0, 1]", cfg.PairTopP)
	}
	return &Client{cfg: cfg, llm: lc}, nil
}

// Stats returns the number of HTTP attempts made and how many of them were
// retries.
func (c *Client) Stats() (requests, retries int64) { return c.llm.Stats() }

// Complete sends one completions request (Model filled in), retrying
// transient failures, and returns the decoded response. It fails when the
// response has no choices.
func (c *Client) Complete(ctx context.Context, req llm.CompletionBody) (*llm.CompletionResponse, error) {
	req.Model = c.cfg.Model
	var out llm.CompletionResponse
	if err := c.llm.Post(ctx, "/completions", req, &out); err != nil {
		return nil, err
	}
	if len(out.Choices) == 0 {
		return nil, errorf("POST %s/completions: response has no choices", c.llm.BaseURL())
	}
	return &out, nil
}
