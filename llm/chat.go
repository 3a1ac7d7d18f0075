package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
)

// Message is one chat message. Messages read from JSON keep their text
// (Raw) and are sent as they are, so content parts, names and tool calls
// pass through; Role and Content are filled in when content is a string.
// A Message built in code (Raw nil) is sent as {"role", "content"}.
type Message struct {
	Role    string
	Content string
	Raw     json.RawMessage
}

// MarshalJSON sends Raw when set.
func (m Message) MarshalJSON() ([]byte, error) {
	if m.Raw != nil {
		return m.Raw, nil
	}
	return json.Marshal(struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}{m.Role, m.Content})
}

// UnmarshalJSON reads an object with a non-empty string "role"; content
// may be a string, a list of parts or null.
func (m *Message) UnmarshalJSON(data []byte) error {
	var v struct {
		Role    *string         `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return fmt.Errorf("a message must be an object with \"role\" and \"content\": %v", err)
	}
	if v.Role == nil || *v.Role == "" {
		return fmt.Errorf("a message needs a \"role\"")
	}
	*m = Message{Role: *v.Role, Raw: bytes.Clone(bytes.TrimSpace(data))}
	if len(v.Content) > 0 && v.Content[0] == '"' {
		_ = json.Unmarshal(v.Content, &m.Content)
	}
	return nil
}

// ChatRequest is the body of POST /chat/completions. Zero N, MaxTokens and
// nil pointers are left out, so the server's defaults apply. Extra adds
// top-level keys (stop, logprobs, response_format, ...) as they are; it
// may not repeat a key the other fields set.
type ChatRequest struct {
	Model       string
	Messages    []Message
	N           int
	Temperature *float64
	TopP        *float64
	MaxTokens   int
	Seed        *int64
	// Logprobs asks for the log-probability of every generated token and
	// TopLogprobs for as many alternatives of each (0: none).
	Logprobs    bool
	TopLogprobs int
	Extra       map[string]json.RawMessage
	// MaxResponseBytes bounds the answer (0: the client's
	// Config.MaxResponseBytes); in Sample, every answer of its top-ups
	// together, so that a server answering one long choice at a time
	// holds no more than one answer of n choices would.
	MaxResponseBytes int64
}

// CompletionRequest is the body of POST /completions, with the same
// conventions as ChatRequest.
type CompletionRequest struct {
	Model       string
	Prompt      string
	N           int
	Temperature *float64
	TopP        *float64
	MaxTokens   int
	Seed        *int64
	// Logprobs asks for the log-probability of every generated token and
	// TopLogprobs for as many alternatives of each (0: none).
	Logprobs    bool
	TopLogprobs int
	Extra       map[string]json.RawMessage
	// MaxResponseBytes bounds the answer (0: the client's
	// Config.MaxResponseBytes); in Sample, every answer of its top-ups
	// together, so that a server answering one long choice at a time
	// holds no more than one answer of n choices would.
	MaxResponseBytes int64
}

// Choice is one generated answer.
type Choice struct {
	Text string
	// FinishReason is the server's: "stop", "length" (cut at max_tokens),
	// ... or "" when it sent none.
	FinishReason string
	// Tokens are the answer's tokens with their log-probabilities, nil when
	// the server sent none (it was not asked, or ignores the request).
	Tokens []TokenLogprob
}

// TokenLogprob is one generated token, its natural-log probability, and
// the most likely alternatives the server reported (Top, most likely
// first as the server sent them; nil when none were asked).
type TokenLogprob struct {
	Token   string        `json:"token"`
	Logprob float64       `json:"logprob"`
	Top     []TokenChoice `json:"top,omitempty"`
}

// TokenChoice is one alternative of a TokenLogprob.
type TokenChoice struct {
	Token   string  `json:"token"`
	Logprob float64 `json:"logprob"`
}

// Usage counts tokens, as the server reports them.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// Add returns the sum of two counts.
func (u Usage) Add(v Usage) Usage {
	return Usage{u.PromptTokens + v.PromptTokens, u.CompletionTokens + v.CompletionTokens, u.TotalTokens + v.TotalTokens}
}

// postChoices posts the fields that are set, merged with extra, to path
// (the chat API's when chat) and returns the answer's choices.
// It reads at most limit bytes (0: the client's bound) and returns the
// bytes it read.
func (c *Client) postChoices(ctx context.Context, path string, chat bool, extra map[string]json.RawMessage, fields map[string]any, limit int64) ([]Choice, Usage, int64, error) {
	body := make(map[string]json.RawMessage, len(extra)+len(fields))
	for k, v := range extra {
		body[k] = v
	}
	for k, v := range fields {
		if _, dup := extra[k]; dup {
			return nil, Usage{}, 0, errorf("extra key %q repeats a field of the request", k)
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, Usage{}, 0, errorf("encoding %q: %v", k, err)
		}
		body[k] = b
	}
	var resp choicesResponse
	read, err := c.post(ctx, path, body, &resp, limit)
	if err != nil {
		return nil, Usage{}, 0, err
	}
	ch, u, err := resp.choices(chat, c.where(path))
	return ch, u, read, err
}

func common(model string, n int, temperature, topP *float64, maxTokens int, seed *int64) (map[string]any, error) {
	if model == "" {
		return nil, errorf("no model name")
	}
	f := map[string]any{"model": model}
	if n < 0 || maxTokens < 0 {
		return nil, errorf("n %d, max_tokens %d: want 0 (the server's default) or more", n, maxTokens)
	}
	if n > 0 {
		f["n"] = n
	}
	if maxTokens > 0 {
		f["max_tokens"] = maxTokens
	}
	for name, p := range map[string]*float64{"temperature": temperature, "top_p": topP} {
		if p != nil {
			if math.IsNaN(*p) || math.IsInf(*p, 0) {
				return nil, errorf("%s %v: want a finite number", name, *p)
			}
			f[name] = *p
		}
	}
	if seed != nil {
		f["seed"] = *seed
	}
	return f, nil
}

type choicesResponse struct {
	Choices []struct {
		Index   int    `json:"index"`
		Text    string `json:"text"`
		Message *struct {
			Content *string `json:"content"`
		} `json:"message"`
		FinishReason *string         `json:"finish_reason"`
		Logprobs     json.RawMessage `json:"logprobs"`
	} `json:"choices"`
	Usage *Usage `json:"usage"`
}

func (r *choicesResponse) choices(chat bool, where string) ([]Choice, Usage, error) {
	if len(r.Choices) == 0 {
		return nil, Usage{}, errorf("%s: response has no choices", where)
	}
	out := make([]Choice, len(r.Choices))
	for i, ch := range r.Choices {
		if chat {
			if ch.Message == nil {
				return nil, Usage{}, errorf("%s: choice %d has no message", where, i)
			}
			if ch.Message.Content != nil {
				out[i].Text = *ch.Message.Content
			}
		} else {
			out[i].Text = ch.Text
		}
		if ch.FinishReason != nil {
			out[i].FinishReason = *ch.FinishReason
		}
		toks, err := parseLogprobs(ch.Logprobs, chat)
		if err != nil {
			return nil, Usage{}, errorf("%s: choice %d: logprobs: %v", where, i, err)
		}
		out[i].Tokens = toks
	}
	var u Usage
	if r.Usage != nil {
		u = *r.Usage
	}
	return out, u, nil
}

// Chat sends one chat completions request and returns its choices (as many
// as the server sent) and token usage.
func (c *Client) Chat(ctx context.Context, req ChatRequest) ([]Choice, Usage, error) {
	ch, u, _, err := c.chat(ctx, req)
	return ch, u, err
}

func (c *Client) chat(ctx context.Context, req ChatRequest) ([]Choice, Usage, int64, error) {
	f, err := common(req.Model, req.N, req.Temperature, req.TopP, req.MaxTokens, req.Seed)
	if err != nil {
		return nil, Usage{}, 0, err
	}
	if len(req.Messages) == 0 {
		return nil, Usage{}, 0, errorf("no messages")
	}
	if err := checkTop(req.Logprobs, req.TopLogprobs); err != nil {
		return nil, Usage{}, 0, err
	}
	f["messages"] = req.Messages
	if req.Logprobs {
		f["logprobs"] = true
		if req.TopLogprobs > 0 {
			f["top_logprobs"] = req.TopLogprobs
		}
	}
	return c.postChoices(ctx, "/chat/completions", true, req.Extra, f, req.MaxResponseBytes)
}

// Complete sends one completions request and returns its choices and
// token usage.
func (c *Client) Complete(ctx context.Context, req CompletionRequest) ([]Choice, Usage, error) {
	ch, u, _, err := c.complete(ctx, req)
	return ch, u, err
}

func (c *Client) complete(ctx context.Context, req CompletionRequest) ([]Choice, Usage, int64, error) {
	f, err := common(req.Model, req.N, req.Temperature, req.TopP, req.MaxTokens, req.Seed)
	if err != nil {
		return nil, Usage{}, 0, err
	}
	if err := checkTop(req.Logprobs, req.TopLogprobs); err != nil {
		return nil, Usage{}, 0, err
	}
	f["prompt"] = req.Prompt
	if req.Logprobs {
		// The completions API asks with the number of alternatives.
		f["logprobs"] = req.TopLogprobs
	}
	return c.postChoices(ctx, "/completions", false, req.Extra, f, req.MaxResponseBytes)
}

// MaxSamples bounds n in Sample: a server that answers one choice a
// request costs n requests.
const MaxSamples = 4096

// Sample draws n chat answers: it asks for n and then, while fewer have
// come back, for the missing ones. Each top-up request has its own seed
// (TopUpSeed) when req.Seed is set. Choices beyond n are dropped. The
// answers together are bounded by req.MaxResponseBytes (or the client's
// bound): each top-up may read only what the earlier answers left, so a
// server that answers one long choice at a time holds no more than one
// answer of n would; past it Sample fails with a *SizeError.
func (c *Client) Sample(ctx context.Context, req ChatRequest, n int) ([]Choice, Usage, error) {
	return c.sample(n, req.Seed, req.MaxResponseBytes, c.where("/chat/completions"), func(k int, seed *int64, limit int64) ([]Choice, Usage, int64, error) {
		r := req
		r.N, r.Seed, r.MaxResponseBytes = k, seed, limit
		return c.chat(ctx, r)
	})
}

// SampleCompletions is Sample for the completions API.
func (c *Client) SampleCompletions(ctx context.Context, req CompletionRequest, n int) ([]Choice, Usage, error) {
	return c.sample(n, req.Seed, req.MaxResponseBytes, c.where("/completions"), func(k int, seed *int64, limit int64) ([]Choice, Usage, int64, error) {
		r := req
		r.N, r.Seed, r.MaxResponseBytes = k, seed, limit
		return c.complete(ctx, r)
	})
}

func (c *Client) sample(n int, seed *int64, budget int64, where string, ask func(k int, seed *int64, limit int64) ([]Choice, Usage, int64, error)) ([]Choice, Usage, error) {
	if n < 1 || n > MaxSamples {
		return nil, Usage{}, errorf("n %d: want 1..%d", n, MaxSamples)
	}
	if budget <= 0 {
		budget = c.cfg.MaxResponseBytes
	}
	out := make([]Choice, 0, n)
	var (
		total Usage
		read  int64 // bytes of the answers so far
	)
	// Every round brings at least one choice (Chat fails on none), so
	// there are at most n rounds.
	for round := 0; len(out) < n; round++ {
		if read >= budget {
			return nil, total, &SizeError{Where: where, Limit: budget, Earlier: read, Responses: round, Choices: len(out), N: n}
		}
		var s *int64
		if seed != nil {
			v := TopUpSeed(*seed, round)
			s = &v
		}
		ch, u, b, err := ask(n-len(out), s, budget-read)
		if se := (*SizeError)(nil); round > 0 && errors.As(err, &se) {
			return nil, total, &SizeError{Where: where, Limit: budget, Earlier: read, Responses: round, Choices: len(out), N: n}
		}
		if err != nil {
			return nil, total, err
		}
		read += b
		total = total.Add(u)
		out = append(out, ch[:min(len(ch), n-len(out))]...)
	}
	return out, total, nil
}

// TopUpSeed is the seed of the round-th request for one prompt (round 0
// is the first): the seed itself, then a non-negative int64 mixed from it
// and the round (splitmix64), so that top-up rounds of nearby seeds do
// not repeat each other's draws.
func TopUpSeed(seed int64, round int) int64 {
	if round == 0 {
		return seed
	}
	z := uint64(seed) + uint64(round)*0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	z ^= z >> 31
	return int64(z >> 1)
}

// Embed returns one embedding per input from POST /embeddings, in the
// order of inputs. Every vector must have the same length.
func (c *Client) Embed(ctx context.Context, model string, inputs []string) ([][]float64, error) {
	if model == "" {
		return nil, errorf("no embedding model name")
	}
	if len(inputs) == 0 {
		return nil, nil
	}
	var resp EmbeddingsResponse
	if err := c.Post(ctx, "/embeddings", map[string]any{"model": model, "input": inputs}, &resp); err != nil {
		return nil, err
	}
	where := "POST " + c.base + "/embeddings"
	if len(resp.Data) != len(inputs) {
		return nil, errorf("%s: %d embeddings for %d inputs", where, len(resp.Data), len(inputs))
	}
	out := make([][]float64, len(inputs))
	for i, d := range resp.Data {
		j := i
		if d.Index != nil {
			j = *d.Index
		}
		switch {
		case j < 0 || j >= len(out):
			return nil, errorf("%s: embedding index %d out of range [0, %d)", where, j, len(out))
		case out[j] != nil:
			return nil, errorf("%s: embedding index %d given twice", where, j)
		case len(d.Embedding) == 0:
			return nil, errorf("%s: embedding %d is empty", where, j)
		case len(d.Embedding) != len(resp.Data[0].Embedding):
			return nil, errorf("%s: embeddings of %d and %d dimensions", where, len(resp.Data[0].Embedding), len(d.Embedding))
		}
		out[j] = d.Embedding
	}
	return out, nil
}

func checkTop(logprobs bool, k int) error {
	if k < 0 || k > MaxTopLogprobs || k > 0 && !logprobs {
		return errorf("top_logprobs %d: want 0 to %d, with logprobs", k, MaxTopLogprobs)
	}
	return nil
}

// ChatChoices reads the choices of a chat completion's body as Chat
// returns them, their logprobs checked (a choice without them has nil
// Tokens): what a proxy reads of an answer it passes on.
func ChatChoices(body []byte) ([]Choice, error) {
	var r choicesResponse
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, errorf("answer: %v", err)
	}
	ch, _, err := r.choices(true, "answer")
	return ch, err
}
