package llmjob

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/fields"
	"github.com/genlens/genlens/internal/format/jsonnum"
	"github.com/genlens/genlens/internal/tensor/par"
	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/job/internal/textembed"
	"github.com/genlens/genlens/llm"
	"github.com/genlens/genlens/network/bert"
)

// SampleRequest is a request of `genlens sample`: n answers to every
// prompt of a file from an OpenAI-compatible endpoint (and, optionally,
// their embeddings), as rows that `genlens entropy` reads. Start from
// NewSampleRequest, which holds the command line's defaults.
//
// The API key never travels in a request: APIKeyEnv names the secret,
// which the job reads through Env.Secret.
type SampleRequest struct {
	Prompts     string   `json:"prompts" help:"prompt rows (JSONL): {\"id\", \"prompt\"|\"messages\", \"reference\"?, ...}"` // JSONL rows {"id", "prompt"|"messages", "reference"?, ...}
	BaseURL     string   `json:"base_url" help:"API root of the OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1"`
	Model       string   `json:"model" help:"the server's model name"`
	N           int      `json:"n" help:"samples per prompt"` // samples per prompt
	Temperature float64  `json:"temperature" help:"sampling temperature"`
	MaxTokens   int      `json:"max_tokens" help:"tokens per answer at most"`
	TopP        *float64 `json:"top_p,omitempty"`                                                                                // nil: the server's default
	Seed        *int64   `json:"seed,omitempty"`                                                                                 // nil: no seeds sent
	API         string   `json:"api" help:"chat (/chat/completions) or completions (/completions)"`                              // chat or completions
	APIKeyEnv   string   `json:"api_key_env" help:"environment variable holding the API key (never printed, logged or written)"` // the name of the secret holding the API key; "": none
	Greedy      bool     `json:"greedy" help:"also draw one temperature-0 answer per prompt, stored as 'answer'"`                // one extra temperature-0 answer per prompt
	Logprobs    bool     `json:"logprobs,omitempty" help:"ask for token log-probabilities, stored as 'logprobs' (and 'answer_logprobs')"`
	TopLogprobs int      `json:"top_logprobs,omitempty" help:"alternatives per token with {logprobs} (0..20)"`

	EmbedModel   string `json:"embed_model" help:"embed every sample with this model (/embeddings), stored as 'embeddings'"` // "": no embeddings
	EmbedBaseURL string `json:"embed_base_url" help:"API root of the embedding server (default: {base_url})"`                // "": BaseURL
	// Embedder and Weights embed every sample in process with a BERT
	// sentence embedder (bert.Names) from a model directory, instead of
	// an /embeddings endpoint; stored as 'embeddings' all the same.
	Embedder string `json:"embedder,omitempty"`
	Weights  string `json:"weights,omitempty"`
	// Prefix is what Embedder puts before every sample: query (""),
	// passage or none (bert.Prefixes).
	Prefix string `json:"prefix,omitempty" help:"with {embedder}: query, passage or none, what goes before every text (e5-small-v2: \"query: \", \"passage: \" or nothing; the kernel-entropy paper's setting is none); query by default"`

	Concurrency int           `json:"concurrency" help:"requests in flight"`              // requests in flight
	RPM         float64       `json:"rpm" help:"requests a minute at most (0: no limit)"` // requests a minute; 0: no limit
	Retries     int           `json:"retries" help:"retries of a request on 429, 5xx, timeouts, connection errors and cut-off answers"`
	Timeout     time.Duration `json:"timeout" help:"time limit of one request attempt"` // per attempt, in nanoseconds

	// Out is the file finished rows are appended to, one line each,
	// synced; ids already there are skipped. "" keeps the rows in the
	// result (the answers.jsonl artifact), as the service does.
	Out string `json:"out"`
}

// NewSampleRequest returns a request with the command line's defaults.
func NewSampleRequest() SampleRequest {
	return SampleRequest{N: 10, Temperature: 1, MaxTokens: 64, API: "chat", Concurrency: 8,
		Retries: llm.DefaultMaxRetries, Timeout: 60 * time.Second}
}

// Bounds of a sample request.
const (
	MaxSampleN           = 1024
	MaxSampleConcurrency = 1024
	// MaxSampleTopLogprobs is the most alternatives per token OpenAI's
	// API returns.
	MaxSampleTopLogprobs = 20
	MaxSampleRPM         = 1e6
	// MaxSampleAnswerBytes bounds the bytes of the answers in flight:
	// {concurrency} prompts' answers of {n} choices (and the greedy
	// one) of {max_tokens} tokens, each token priced by llm.AnswerBytes
	// (llm.TokenBytes, and what {logprobs} and {top_logprobs} add),
	// plus llm.AnswerOverhead an answer. A request that could need more
	// is refused before it starts; the answers of one prompt, top-ups
	// included, are not read past their price.
	MaxSampleAnswerBytes = 512 << 20
)

// samplesBytes is the price of the {n} samples of one prompt, every
// top-up included; greedyBytes that of its greedy answer (0 without).
func (r *SampleRequest) samplesBytes() int64 {
	return llm.AnswerBytes(r.N, r.MaxTokens, r.Logprobs, r.TopLogprobs)
}

func (r *SampleRequest) greedyBytes() int64 {
	if !r.Greedy {
		return 0
	}
	return llm.AnswerBytes(1, r.MaxTokens, r.Logprobs, r.TopLogprobs)
}

// tokenBytes is the price of one token of r's answers.
func (r *SampleRequest) tokenBytes() int64 {
	return (llm.AnswerBytes(1, 1, r.Logprobs, r.TopLogprobs) - llm.AnswerOverhead)
}

// answerBytes is the bytes one prompt's answers of r may hold: its
// samples and greedy answer, or llm's bound of a response when the same
// server embeds them too.
func (r *SampleRequest) answerBytes() int64 {
	n := r.samplesBytes() + r.greedyBytes()
	if r.EmbedBaseURL != "" && r.EmbedBaseURL == r.BaseURL {
		n = max(n, llmResponseBytes)
	}
	return n
}

// llmResponseBytes is llm's default bound of a response
// (llm.Config.MaxResponseBytes).
const llmResponseBytes = 32 << 20

// Validate checks the fields that need no input file.
func (r *SampleRequest) Validate() (verr error) {
	defer func() { verr = job.WithDefault(verr, r, NewSampleRequest()) }()
	if err := job.CheckLimits("sample", job.Lim("n", r.N, MaxSampleN), job.Lim("max_tokens", r.MaxTokens, llm.MaxMaxTokens), job.Lim("concurrency", r.Concurrency, MaxSampleConcurrency),
		job.Lim("retries", r.Retries, llm.MaxRetries), job.Lim("top_logprobs", r.TopLogprobs, MaxSampleTopLogprobs)); err != nil {
		return err
	}
	if err := job.CheckTimeout("timeout", r.Timeout, llm.MaxTimeout); err != nil {
		return err
	}
	if r.Embedder != "" && r.EmbedModel != "" {
		return fault.Fieldf("embedder", "{embedder} and {embed_model} both embed the samples: give one")
	}
	if err := textembed.CheckPrefix(r.Embedder, r.Prefix); err != nil {
		return err
	}
	if err := textembed.Check(r.Embedder, r.Weights, ""); err != nil {
		return err
	}
	_, err := r.clientConfig("")
	return err
}

func (r *SampleRequest) clientConfig(key string) (llm.Config, error) {
	switch {
	case r.Prompts == "":
		return llm.Config{}, fault.Fieldf("prompts", "sample: {prompts} FILE is required")
	case r.BaseURL == "" || r.Model == "":
		return llm.Config{}, fault.Fieldf("base_url", "sample: {base_url} URL and {model} NAME are required")
	case r.N < 1 || r.N > MaxSampleN:
		return llm.Config{}, fault.Fieldf("n", "{n} %d: want 1..%d", r.N, MaxSampleN)
	case !(r.Temperature >= 0 && r.Temperature <= 100):
		return llm.Config{}, fault.Fieldf("temperature", "{temperature} %v: want a value in [0, 100]", r.Temperature)
	case r.TopLogprobs < 0 || r.TopLogprobs > MaxSampleTopLogprobs || r.TopLogprobs > 0 && !r.Logprobs:
		return llm.Config{}, fault.Fieldf("top_logprobs", "{top_logprobs} %d: want 0..%d, and only with {logprobs}", r.TopLogprobs, MaxSampleTopLogprobs)
	case r.MaxTokens < 1 || r.MaxTokens > llm.MaxMaxTokens:
		return llm.Config{}, fault.Fieldf("max_tokens", "{max_tokens} %d: want 1..%d", r.MaxTokens, llm.MaxMaxTokens)
	case r.TopP != nil && !(*r.TopP > 0 && *r.TopP <= 1):
		return llm.Config{}, fault.Fieldf("top_p", "{top_p} %v: want a value in (0, 1]", *r.TopP)
	case r.API != "chat" && r.API != "completions":
		return llm.Config{}, fault.Fieldf("api", "{api} %q: want chat or completions", r.API)
	case r.Concurrency < 1 || r.Concurrency > MaxSampleConcurrency:
		return llm.Config{}, fault.Fieldf("concurrency", "{concurrency} %d: want 1..%d", r.Concurrency, MaxSampleConcurrency)
	case !(r.RPM >= 0 && r.RPM <= MaxSampleRPM):
		return llm.Config{}, fault.Fieldf("rpm", "{rpm} %v: want 0 (no limit) up to %g", r.RPM, MaxSampleRPM)
	case r.Retries < 0 || r.Retries > llm.MaxRetries:
		return llm.Config{}, fault.Fieldf("retries", "{retries} %d: want 0..%d", r.Retries, llm.MaxRetries)
	case r.Timeout <= 0 || r.Timeout > llm.MaxTimeout:
		return llm.Config{}, fault.Fieldf("timeout", "{timeout} %v: want a positive duration up to %v", r.Timeout, llm.MaxTimeout)
	case r.EmbedBaseURL != "" && r.EmbedModel == "":
		return llm.Config{}, fault.Fieldf("embed_base_url", "{embed_base_url} needs {embed_model} NAME")
	case r.answerBytes()*int64(r.Concurrency) > MaxSampleAnswerBytes:
		return llm.Config{}, fault.Fieldf("concurrency", "{n} %d × {max_tokens} %d × {concurrency} %d: answers of up to %d MiB in flight, over the bound of %d MiB (%d bytes a token%s, %d MiB an answer besides): lower one of them",
			r.N, r.MaxTokens, r.Concurrency, r.answerBytes()*int64(r.Concurrency)>>20, MaxSampleAnswerBytes>>20, r.tokenBytes(), r.logprobsPriced(), llm.AnswerOverhead>>20)
	}
	cfg := llm.Config{BaseURL: r.BaseURL, APIKey: key, Timeout: r.Timeout, MaxRetries: r.Retries, RetryBase: 500 * time.Millisecond,
		Concurrency: r.Concurrency, RPM: r.RPM, MaxResponseBytes: r.answerBytes()}
	if _, err := llm.New(cfg); err != nil {
		return cfg, fault.Fieldf("base_url", "{base_url}: %s", configMsg(err))
	}
	if r.EmbedBaseURL != "" {
		e := cfg
		e.BaseURL = r.EmbedBaseURL
		if _, err := llm.New(e); err != nil {
			return cfg, fault.Fieldf("embed_base_url", "{embed_base_url}: %s", configMsg(err))
		}
	}
	return cfg, nil
}

// logprobsPriced says what the price of a token includes besides its
// text, for messages.
func (r *SampleRequest) logprobsPriced() string {
	switch {
	case r.TopLogprobs > 0:
		return fmt.Sprintf(" with {logprobs} and {top_logprobs} %d", r.TopLogprobs)
	case r.Logprobs:
		return " with {logprobs}"
	}
	return ""
}

// answersTooLarge turns llm's refusal of answers longer than their price
// into a message naming the price and the fields that set it.
func (r *SampleRequest) answersTooLarge(err error, greedy bool) error {
	se := (*llm.SizeError)(nil)
	if !errors.As(err, &se) {
		return err
	}
	what, n := fmt.Sprintf("{n} %d answers", r.N), r.N
	if greedy {
		what, n = "the greedy answer", 1
	}
	return fault.Fieldf("max_tokens", "%s: %s of {max_tokens} %d tokens are priced at %d bytes (%d bytes a token%s, %d MiB besides), and the server sent more (%s). A server that writes longer answers than {max_tokens} allows needs a larger {max_tokens}, with {n} or {concurrency} lower to stay within the %d MiB in flight",
		fault.Printable(se.Where, 200), what, r.MaxTokens, se.Limit, r.tokenBytes(), r.logprobsPriced(), llm.AnswerOverhead>>20, sizeErrorDetail(se, n), MaxSampleAnswerBytes>>20)
}

// sizeErrorDetail says how far answers of n choices got within their
// price.
func sizeErrorDetail(se *llm.SizeError, n int) string {
	if se.Responses == 0 {
		return "one response larger than the price"
	}
	return fmt.Sprintf("%d responses took %d bytes for %d of %d choices", se.Responses, se.Earlier, se.Choices, n)
}

// configMsg is the reason package llm refuses a configuration, without
// its prefix: the message names the field.
func configMsg(err error) string {
	if ce := (*llm.ConfigError)(nil); errors.As(err, &ce) {
		return ce.Msg
	}
	return err.Error()
}

// outbound returns the servers the request calls, for a service's
// allow-list.
func (r *SampleRequest) outbound() []job.Outbound {
	out := []job.Outbound{{Field: "base_url", URL: r.BaseURL, SecretField: "api_key_env", Secret: r.APIKeyEnv}}
	if r.EmbedBaseURL != "" && r.EmbedBaseURL != r.BaseURL {
		out = append(out, job.Outbound{Field: "embed_base_url", URL: r.EmbedBaseURL})
	}
	return out
}

// SampleResult is the summary of a sample run (and, without Out, its rows).
type SampleResult struct {
	Out      string `json:"out,omitempty"`
	Prompts  int    `json:"prompts"`  // rows of the prompts file
	Skipped  int    `json:"skipped"`  // already in Out from an earlier run
	Sampled  int    `json:"sampled"`  // prompts sampled by this run
	Samples  int    `json:"samples"`  // answers drawn by this run (greedy answers included)
	Requests int64  `json:"requests"` // HTTP attempts, retries and embedding requests included
	Retries  int64  `json:"retries"`
	// RepairedBytes is the length of a truncated last line of Out (a run
	// stopped mid-write) that was removed before appending.
	RepairedBytes int `json:"repaired_bytes"`
	// Failed are the prompts the server refused (a 4xx other than a
	// rate limit, an unknown model or a bad key: a prompt it cannot
	// read); the others were sampled, and a rerun samples only these.
	Failed           []FailedPrompt `json:"failed,omitempty"`
	Tokens           llm.Usage      `json:"tokens"` // as the server reports them
	Seconds          jsonnum.Num    `json:"seconds"`
	PromptsPerSecond jsonnum.Num    `json:"prompts_per_second"`
	TokensPerSecond  jsonnum.Num    `json:"tokens_per_second"` // completion tokens

	rows [][]byte // without Out
}

// FailedPrompt is a prompt the server refused, with its message.
type FailedPrompt struct {
	ID    string `json:"id"`
	Line  int    `json:"line"`
	Error string `json:"error"`
}

// promptRefused reports whether err is the server refusing one prompt
// (400, 413, 422), which does not stop the run, rather than something
// every prompt would meet (a wrong key or model, a server down).
func promptRefused(err error) bool {
	var se *llm.StatusError
	if !errors.As(err, &se) {
		return false
	}
	switch se.StatusCode {
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusUnprocessableEntity:
		return true
	}
	return false
}

// Artifacts returns answers.jsonl (the rows) when the run kept them.
func (r *SampleResult) Artifacts() []job.Artifact {
	if r.Out != "" {
		return nil
	}
	return []job.Artifact{{Name: "answers.jsonl", Write: func(w io.Writer) error {
		for _, row := range r.rows {
			if _, err := w.Write(row); err != nil {
				return err
			}
		}
		return nil
	}}}
}

// Rows returns the rows a run without Out kept, one JSON line each.
func (r *SampleResult) Rows() [][]byte { return r.rows }

// Sample runs `genlens sample`: it reads the prompts through env.FS, skips
// those already in req.Out, and samples the rest with up to
// req.Concurrency requests in flight, appending each finished prompt to
// req.Out as one synced line. Progress counts prompts (env.Progress) and
// completion tokens (env.Meter "tokens"). The first prompt that fails
// after retries stops the run; the rows already written stay, and a rerun
// samples only the rest. A prompt the server refuses (promptRefused) is
// reported as a warning and in Failed, and the run goes on.
func Sample(ctx context.Context, env job.Env, req SampleRequest) (*SampleResult, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	key := ""
	if req.APIKeyEnv != "" {
		k, ok := env.LookupSecret(req.APIKeyEnv)
		if !ok {
			return nil, fault.Fieldf("api_key_env", "{api_key_env} %s: no such secret (set the variable, or leave {api_key_env} empty for a server without keys)", req.APIKeyEnv)
		}
		key = k
	}
	cfg, err := req.clientConfig(key)
	if err != nil {
		return nil, err
	}
	cfg.HTTPClient = env.HTTPClient
	client, err := llm.New(cfg)
	if err != nil {
		return nil, err
	}
	embedder := client
	if req.EmbedBaseURL != "" && req.EmbedBaseURL != req.BaseURL {
		ecfg := cfg
		ecfg.BaseURL, ecfg.MaxResponseBytes = req.EmbedBaseURL, 0 // embeddings: llm's bound
		if embedder, err = llm.New(ecfg); err != nil {
			return nil, fault.Fieldf("embed_base_url", "{embed_base_url}: %s", configMsg(err))
		}
	}
	rows, err := readPromptRows(env.InputFS(), req.Prompts)
	if err != nil {
		return nil, err
	}
	var text *bert.Embedder
	if req.Embedder != "" {
		if text, err = textembed.Load(ctx, env, req.Embedder, req.Weights, req.Prefix); err != nil {
			return nil, err
		}
	}
	if req.API == "completions" {
		for _, r := range rows {
			if r.messages != nil {
				return nil, &fault.InputError{File: req.Prompts, Line: r.line, Field: "messages", Msg: `chat messages need {api} chat; the completions API takes "prompt" rows`}
			}
		}
	}
	res := &SampleResult{Out: req.Out, Prompts: len(rows)}
	var out *os.File
	if req.Out != "" {
		var done map[string]bool
		out, done, res.RepairedBytes, err = openResumable(req.Out)
		if err != nil {
			return nil, err
		}
		defer out.Close()
		if res.RepairedBytes > 0 {
			env.Warning(fmt.Sprintf("%s: removed a truncated last line (%d bytes) left by an interrupted run; that prompt is sampled again", req.Out, res.RepairedBytes))
		}
		todo := rows[:0:0]
		for _, r := range rows {
			if !done[r.id] {
				todo = append(todo, r)
			}
		}
		res.Skipped = len(rows) - len(todo)
		rows = todo
	}
	s := &sampler{req: req, client: client, embedder: embedder, text: text, env: env}
	var (
		mu     sync.Mutex
		done   int
		tokens atomic.Int64
	)
	start := time.Now()
	env.ReportProgress(0, len(rows))
	err = par.For(ctx, len(rows), req.Concurrency, func(ctx context.Context, i int) error {
		line, usage, nsamples, err := s.one(ctx, rows[i])
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if promptRefused(err) {
				env.Warning(fmt.Sprintf("prompt %q (%s line %d) not sampled: %v", clipText(rows[i].id, 60), req.Prompts, rows[i].line, err))
				mu.Lock()
				res.Failed = append(res.Failed, FailedPrompt{ID: rows[i].id, Line: rows[i].line, Error: err.Error()})
				done++
				env.ReportProgress(done, len(rows))
				mu.Unlock()
				return nil
			}
			return fields.Errorf("prompt %q (%s line %d): %w", clipText(rows[i].id, 60), req.Prompts, rows[i].line, err)
		}
		if out != nil {
			// One write of the whole line, then fsync: a crash leaves at
			// most a truncated last line, which the next run removes. The
			// sync runs outside the lock, so that other prompts' lines
			// are written meanwhile and one sync often covers several.
			mu.Lock()
			_, err := out.Write(line)
			mu.Unlock()
			if err != nil {
				return fmt.Errorf("writing %s: %w", req.Out, err)
			}
			if err := out.Sync(); err != nil {
				return fmt.Errorf("syncing %s: %w", req.Out, err)
			}
		}
		mu.Lock()
		defer mu.Unlock()
		if out == nil {
			res.rows = append(res.rows, line)
		}
		res.Sampled++
		res.Samples += nsamples
		res.Tokens = res.Tokens.Add(usage)
		done++
		env.ReportProgress(done, len(rows))
		env.AddMeter("tokens", int64(usage.CompletionTokens))
		tokens.Add(int64(usage.CompletionTokens))
		return nil
	})
	el := time.Since(start).Seconds()
	res.Seconds = jsonnum.Num(el)
	if el > 0 {
		res.PromptsPerSecond = jsonnum.Num(float64(res.Sampled) / el)
		res.TokensPerSecond = jsonnum.Num(float64(tokens.Load()) / el)
	}
	res.Requests, res.Retries = client.Stats()
	if embedder != client {
		r2, t2 := embedder.Stats()
		res.Requests += r2
		res.Retries += t2
	}
	slices.SortFunc(res.Failed, func(a, b FailedPrompt) int { return a.Line - b.Line })
	if err != nil {
		return res, err
	}
	return res, nil
}

// sampler draws the answers of one prompt.
type sampler struct {
	req              SampleRequest
	client, embedder *llm.Client
	// text embeds in process (req.Embedder), one batch at a time: the
	// model's forward pass uses every core already.
	text   *bert.Embedder
	textMu sync.Mutex
	env    job.Env
}

// PromptSeed is the seed of a prompt's first request under the run's
// seed: mixed from the seed and the id (FNV-1a), non-negative, so that a
// prompt draws the same answers whatever its place in the file and
// whether or not an earlier run was interrupted.
func PromptSeed(seed int64, id string) int64 {
	h := fnv.New64a()
	_, _ = io.WriteString(h, id)
	return int64(par.Mix(uint64(seed), h.Sum64()) >> 1)
}

type keyValue = struct {
	key   string
	value any
}

func (s *sampler) one(ctx context.Context, row promptRow) ([]byte, llm.Usage, int, error) {
	r := s.req
	var seed *int64
	if r.Seed != nil {
		v := PromptSeed(*r.Seed, row.id)
		seed = &v
	}
	temp := r.Temperature
	var (
		choices []llm.Choice
		usage   llm.Usage
		err     error
	)
	chat := llm.ChatRequest{Model: r.Model, Messages: row.messages, N: r.N, Temperature: &temp, TopP: r.TopP, MaxTokens: r.MaxTokens, Seed: seed, Logprobs: r.Logprobs, TopLogprobs: r.TopLogprobs,
		MaxResponseBytes: r.samplesBytes()}
	if chat.Messages == nil {
		chat.Messages = []llm.Message{{Role: "user", Content: row.prompt}}
	}
	comp := llm.CompletionRequest{Model: r.Model, Prompt: row.prompt, N: r.N, Temperature: &temp, TopP: r.TopP, MaxTokens: r.MaxTokens, Seed: seed, Logprobs: r.Logprobs, TopLogprobs: r.TopLogprobs,
		MaxResponseBytes: r.samplesBytes()}
	if r.API == "chat" {
		choices, usage, err = s.client.Sample(ctx, chat, r.N)
	} else {
		choices, usage, err = s.client.SampleCompletions(ctx, comp, r.N)
	}
	if err != nil {
		return nil, usage, 0, r.answersTooLarge(err, false)
	}
	samples := make([]string, len(choices))
	reasons := make([]string, len(choices))
	for i, c := range choices {
		samples[i], reasons[i] = c.Text, c.FinishReason
	}
	add := []keyValue{{"samples", samples}}
	// A server that ignores the request sends no tokens: the row then has
	// no logprobs, so scores that need them are reported unavailable.
	if lps, ok := choiceLogprobs(choices); ok {
		add = append(add, keyValue{"logprobs", lps})
	}
	nsamples := len(samples)
	if r.Greedy {
		zero := 0.0
		var g []llm.Choice
		var u llm.Usage
		if r.API == "chat" {
			chat.N, chat.Temperature, chat.TopP, chat.MaxResponseBytes = 1, &zero, nil, r.greedyBytes()
			g, u, err = s.client.Chat(ctx, chat)
		} else {
			comp.N, comp.Temperature, comp.TopP, comp.MaxResponseBytes = 1, &zero, nil, r.greedyBytes()
			g, u, err = s.client.Complete(ctx, comp)
		}
		if err != nil {
			return nil, usage, 0, fields.Errorf("greedy answer: %w", r.answersTooLarge(err, true))
		}
		usage = usage.Add(u)
		add = append(add, keyValue{"answer", g[0].Text}, keyValue{"answer_finish_reason", g[0].FinishReason})
		if g[0].Tokens != nil {
			add = append(add, keyValue{"answer_logprobs", g[0].Tokens})
		}
		nsamples++
	}
	add = append(add, keyValue{"finish_reasons", reasons}, keyValue{"usage", usage})
	if r.EmbedModel != "" {
		emb, err := s.embedder.Embed(ctx, r.EmbedModel, samples)
		if err != nil {
			return nil, usage, 0, fmt.Errorf("embeddings: %w", err)
		}
		add = append(add, keyValue{"embeddings", emb})
	}
	if s.text != nil {
		s.textMu.Lock()
		emb, err := s.text.Forward(ctx, samples)
		s.textMu.Unlock()
		if err != nil {
			return nil, usage, 0, fmt.Errorf("embeddings by %s: %w", r.Embedder, err)
		}
		add = append(add, keyValue{"embeddings", emb})
	}
	var buf bytes.Buffer
	if err := appendRow(&buf, row, add); err != nil {
		return nil, usage, 0, err
	}
	return buf.Bytes(), usage, nsamples, nil
}

// openResumable opens (or creates) an output file for appending and
// returns the ids of its complete rows. A last line without its newline,
// which only a run stopped mid-write leaves, is cut off; its length is
// returned.
func openResumable(path string) (*os.File, map[string]bool, int, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, nil, 0, &fault.InputError{File: path, Msg: "cannot open for writing: " + errText(err), Err: err}
	}
	fail := func(err error) (*os.File, map[string]bool, int, error) {
		f.Close()
		return nil, nil, 0, err
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return fail(&fault.InputError{File: path, Msg: "cannot read: " + errText(err), Err: err})
	}
	complete := bytes.LastIndexByte(data, '\n') + 1
	repaired := len(data) - complete
	if repaired > 0 {
		if err := f.Truncate(int64(complete)); err != nil {
			return fail(fmt.Errorf("repairing %s: %w", path, err))
		}
		if err := f.Sync(); err != nil {
			return fail(fmt.Errorf("repairing %s: %w", path, err))
		}
	}
	if _, err := f.Seek(int64(complete), io.SeekStart); err != nil {
		return fail(fmt.Errorf("%s: %w", path, err))
	}
	done := map[string]bool{}
	line := 0
	for rest := data[:complete]; len(rest) > 0; {
		line++
		i := bytes.IndexByte(rest, '\n')
		b := bytes.TrimSpace(rest[:i])
		rest = rest[i+1:]
		if len(b) == 0 {
			continue
		}
		var v struct {
			ID      json.RawMessage `json:"id"`
			Samples json.RawMessage `json:"samples"`
		}
		if err := json.Unmarshal(b, &v); err != nil || v.Samples == nil {
			return fail(&fault.InputError{File: path, Line: line, Msg: "not a row of sampled answers (is this the right output file?)"})
		}
		id, err := idText(v.ID)
		if err != nil {
			return fail(&fault.InputError{File: path, Line: line, Field: "id", Msg: err.Error()})
		}
		if done[id] {
			return fail(&fault.InputError{File: path, Line: line, Field: "id", Msg: fmt.Sprintf("duplicate id %q", clipText(id, 60))})
		}
		done[id] = true
	}
	return f, done, repaired, nil
}

// choiceLogprobs returns the tokens of every choice, or false when any
// choice came without them.
func choiceLogprobs(choices []llm.Choice) ([][]llm.TokenLogprob, bool) {
	out := make([][]llm.TokenLogprob, len(choices))
	for i, c := range choices {
		if c.Tokens == nil {
			return nil, false
		}
		out[i] = c.Tokens
	}
	return out, len(choices) > 0
}
