package llmtest

import (
	"cmp"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/genlens/genlens/llm"
	"github.com/genlens/genlens/metric/hallucination/categorical"
)

// Config describes the served model.
type Config struct {
	Model  categorical.Model
	Inputs []string // names of the input groups, len = Model.Groups
	Labels []string // names of the labels, len = Model.Labels()
	// ModelName is the name clients must send ["genlens-categorical"].
	ModelName string
	// APIKey, if not empty, must be sent as a bearer token.
	APIKey string
	// Latency is added to every completion, like a language model's
	// compute time, for throughput experiments.
	Latency time.Duration
	// MaxBodyBytes bounds a request body [1 MiB].
	MaxBodyBytes int64

	// MaxN, when positive, caps the choices of one response, as servers
	// that ignore "n" do (llama.cpp server answers one).
	MaxN int
	// EmbeddingModel is the model name /v1/embeddings answers to
	// ["genlens-embedding"].
	EmbeddingModel string
	// EmbeddingDim is the length of the embeddings [32].
	EmbeddingDim int
	// Fault, if not nil, is asked for every POST request, numbered from 1
	// in the order they arrive, which fault to answer it with.
	Fault func(n int64) Fault
	// RetryAfter is the Retry-After header of a RateLimit fault ["1"].
	RetryAfter string
	// Reply, when not nil, is asked first about the prompt of every
	// completions or chat request (a chat request's messages
	// concatenated): when it answers ok, each choice is that Reply
	// instead of the model's continuation. Tests script with it the
	// prompts outside the model's grammar that a client sends besides
	// its samples: an entailment judge's question, p(True)'s.
	Reply func(prompt string) (Reply, bool)
}

// Reply is a scripted answer: its tokens in order.
type Reply []ReplyToken

// ReplyToken is one token of a Reply, its log-probability and its
// alternatives (token → log-probability, the token itself usually among
// them); the most likely Top are reported when alternatives are asked.
type ReplyToken struct {
	Text    string
	Logprob float64
	Top     map[string]float64
}

// scripted is the response of the Reply rep to a request with params p:
// n copies, cut at max_tokens, with the log-probabilities asked for.
func scripted(rep Reply, p params) (*llm.CompletionResponse, [][]token) {
	var gen []token
	var text strings.Builder
	finish := "stop"
	for i, t := range rep {
		if i == p.maxTokens {
			finish = "length"
			break
		}
		var top map[string]float64
		if p.logprobs > 0 {
			top = map[string]float64{}
			names := make([]string, 0, len(t.Top))
			for name := range t.Top {
				names = append(names, name)
			}
			slices.SortFunc(names, func(a, b string) int {
				if c := cmp.Compare(t.Top[b], t.Top[a]); c != 0 {
					return c
				}
				return strings.Compare(a, b)
			})
			for _, name := range names[:min(len(names), p.logprobs)] {
				top[name] = t.Top[name]
			}
		}
		gen = append(gen, token{text: t.Text, logp: t.Logprob, top: top})
		text.WriteString(t.Text)
	}
	resp := &llm.CompletionResponse{Usage: &llm.Usage{CompletionTokens: len(gen) * p.n, TotalTokens: len(gen) * p.n}}
	var gens [][]token
	for c := range p.n {
		ch := llm.CompletionChoice{Index: c, Text: text.String(), FinishReason: finish}
		if p.logprobs >= 0 {
			lp := &llm.Logprobs{}
			for _, t := range gen {
				v := t.logp
				lp.Tokens = append(lp.Tokens, t.text)
				lp.TokenLogprobs = append(lp.TokenLogprobs, &v)
				if p.logprobs > 0 {
					lp.TopLogprobs = append(lp.TopLogprobs, t.top)
				}
			}
			ch.Logprobs = lp
		}
		resp.Choices = append(resp.Choices, ch)
		gens = append(gens, gen)
	}
	return resp, gens
}

// Handler serves /v1/completions, /v1/chat/completions, /v1/embeddings
// and /v1/models.
type Handler struct {
	cfg      Config
	inputs   map[string]int
	labels   map[string]int
	mux      *http.ServeMux
	requests atomic.Int64
	mu       sync.Mutex
	rng      *rand.Rand // seeds for requests without one
}

// NewHandler validates cfg and returns the handler.
func NewHandler(cfg Config) (*Handler, error) {
	if err := cfg.Model.Validate(); err != nil {
		return nil, err
	}
	if len(cfg.Inputs) != cfg.Model.Groups || len(cfg.Labels) != cfg.Model.Labels() {
		return nil, fmt.Errorf("llmtest: %d input names for %d groups, %d label names for %d labels", len(cfg.Inputs), cfg.Model.Groups, len(cfg.Labels), cfg.Model.Labels())
	}
	if cfg.ModelName == "" {
		cfg.ModelName = "genlens-categorical"
	}
	if cfg.MaxBodyBytes == 0 {
		cfg.MaxBodyBytes = 1 << 20
	}
	if cfg.EmbeddingModel == "" {
		cfg.EmbeddingModel = "genlens-embedding"
	}
	if cfg.EmbeddingDim == 0 {
		cfg.EmbeddingDim = 32
	}
	if cfg.RetryAfter == "" {
		cfg.RetryAfter = "1"
	}
	if cfg.EmbeddingDim < 1 || cfg.EmbeddingDim > 1<<16 || cfg.MaxN < 0 {
		return nil, fmt.Errorf("llmtest: embedding dimension %d (want 1..65536), max n %d", cfg.EmbeddingDim, cfg.MaxN)
	}
	h := &Handler{cfg: cfg, inputs: map[string]int{}, labels: map[string]int{}, rng: rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))}
	for kind, names := range map[string][]string{"input": cfg.Inputs, "label": cfg.Labels} {
		index := h.inputs
		if kind == "label" {
			index = h.labels
		}
		for i, s := range names {
			if s == "" || s != strings.TrimSpace(s) || strings.ContainsAny(s, "\n\r") || strings.HasPrefix(s, "Label:") {
				return nil, fmt.Errorf("llmtest: %s name %q: want one line without surrounding spaces", kind, s)
			}
			if _, dup := index[s]; dup {
				return nil, fmt.Errorf("llmtest: duplicate %s name %q", kind, s)
			}
			index[s] = i
		}
	}
	h.mux = http.NewServeMux()
	h.mux.HandleFunc("POST /v1/completions", h.completions)
	h.mux.HandleFunc("POST /v1/chat/completions", h.chatCompletions)
	h.mux.HandleFunc("POST /v1/embeddings", h.embeddings)
	h.mux.HandleFunc("GET /v1/models", h.models)
	return h, nil
}

// Requests returns the number of POST requests (completions, chat
// completions, embeddings) received, faulty answers included.
func (h *Handler) Requests() int64 { return h.requests.Load() }

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

func writeError(w http.ResponseWriter, code int, format string, a ...any) {
	e := llm.ErrorResponse{Error: &llm.ErrorDetail{Message: fmt.Sprintf(format, a...), Type: "invalid_request_error"}}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(e)
}

// authorized checks the bearer token: the scheme case-insensitively (RFC
// 9110 §11.1: "bearer" is as good as "Bearer"), the key in constant time,
// so that response times do not reveal how much of a guess was right.
func (h *Handler) authorized(w http.ResponseWriter, r *http.Request) bool {
	if h.cfg.APIKey == "" {
		return true
	}
	scheme, token, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	if !strings.EqualFold(scheme, "Bearer") || subtle.ConstantTimeCompare([]byte(strings.TrimSpace(token)), []byte(h.cfg.APIKey)) != 1 {
		writeError(w, http.StatusUnauthorized, "invalid API key")
		return false
	}
	return true
}

// maxEchoBytes bounds what an echoed prompt may add to a response: the
// prompt's bytes times n, times 1 + logprobs when log-probabilities come
// with every prompt token. A 7.9 MB prompt once drew a 107 MB response.
const maxEchoBytes = 16 << 20

func (h *Handler) models(w http.ResponseWriter, r *http.Request) {
	if !h.authorized(w, r) {
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"object": "list",
		"data":   []map[string]any{{"id": h.cfg.ModelName, "object": "model", "owned_by": "genlens"}},
	})
}

// request is CompletionRequest with the fields whose absence matters.
type request struct {
	Model       string          `json:"model"`
	Prompt      json.RawMessage `json:"prompt"`
	MaxTokens   *int            `json:"max_tokens"`
	Temperature *float64        `json:"temperature"`
	TopP        *float64        `json:"top_p"`
	N           *int            `json:"n"`
	Logprobs    json.RawMessage `json:"logprobs"`
	Echo        bool            `json:"echo"`
	Stop        json.RawMessage `json:"stop"`
	Seed        *int64          `json:"seed"`
	Stream      bool            `json:"stream"`
	TopLogprobs *int            `json:"top_logprobs"`
	Messages    json.RawMessage `json:"messages"`
}

func (h *Handler) completions(w http.ResponseWriter, r *http.Request) { h.generate(w, r, false) }

func (h *Handler) chatCompletions(w http.ResponseWriter, r *http.Request) { h.generate(w, r, true) }

// generate serves both generation APIs: chat reads the prompt from the
// messages and answers in the chat format.
func (h *Handler) generate(w http.ResponseWriter, r *http.Request, chat bool) {
	if !h.authorized(w, r) {
		return
	}
	fault := h.fault(w, r)
	if fault == Hang || fault == RateLimit || fault == ServerError {
		return
	}
	var req request
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, h.cfg.MaxBodyBytes))
	if err := dec.Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "malformed request: %v", err)
		return
	}
	if req.Model != h.cfg.ModelName {
		writeError(w, http.StatusNotFound, "model %q not found (this server has %q)", req.Model, h.cfg.ModelName)
		return
	}
	var prompt string
	if chat {
		var err error
		if prompt, err = chatPrompt(req); err != nil {
			writeError(w, http.StatusBadRequest, "%v", err)
			return
		}
	} else if err := json.Unmarshal(req.Prompt, &prompt); err != nil {
		writeError(w, http.StatusBadRequest, "prompt must be one string")
		return
	}
	var stop []string
	if len(req.Stop) > 0 && string(req.Stop) != "null" {
		var one string
		if json.Unmarshal(req.Stop, &one) == nil {
			stop = []string{one}
		} else if err := json.Unmarshal(req.Stop, &stop); err != nil {
			writeError(w, http.StatusBadRequest, "stop must be a string or a list of strings")
			return
		}
	}
	p := params{maxTokens: 16, temperature: 1, topP: 1, n: 1, stop: stop, echo: req.Echo}
	if req.MaxTokens != nil {
		p.maxTokens = *req.MaxTokens
	}
	if req.Temperature != nil {
		p.temperature = *req.Temperature
	}
	if req.TopP != nil {
		p.topP = *req.TopP
	}
	if req.N != nil {
		p.n = *req.N
	}
	p.logprobs = -1
	switch {
	case chat && req.Echo:
		writeError(w, http.StatusBadRequest, "echo is not supported on chat completions")
		return
	case chat:
		// The chat API's shape: "logprobs": true, "top_logprobs": k.
		var on bool
		if len(req.Logprobs) > 0 && string(req.Logprobs) != "null" {
			if err := json.Unmarshal(req.Logprobs, &on); err != nil {
				writeError(w, http.StatusBadRequest, "logprobs must be true or false on chat completions (top_logprobs asks for alternatives)")
				return
			}
		}
		if req.TopLogprobs != nil && !on {
			writeError(w, http.StatusBadRequest, "top_logprobs needs logprobs: true")
			return
		}
		if on {
			p.logprobs = 0
			if req.TopLogprobs != nil {
				p.logprobs = *req.TopLogprobs
			}
		}
	case len(req.Logprobs) > 0 && string(req.Logprobs) != "null":
		if err := json.Unmarshal(req.Logprobs, &p.logprobs); err != nil {
			writeError(w, http.StatusBadRequest, "logprobs must be an integer")
			return
		}
	}
	switch {
	case req.Stream && p.echo:
		writeError(w, http.StatusBadRequest, "echo is not supported with stream")
		return
	case p.logprobs < -1:
		writeError(w, http.StatusBadRequest, "logprobs %d: want 0..20", p.logprobs)
		return
	case p.maxTokens < 0 || p.maxTokens > 4096:
		writeError(w, http.StatusBadRequest, "max_tokens %d: want 0..4096", p.maxTokens)
		return
	case !(p.temperature >= 0 && p.temperature <= 100):
		writeError(w, http.StatusBadRequest, "temperature %v: want 0..100", p.temperature)
		return
	case !(p.topP > 0 && p.topP <= 1):
		writeError(w, http.StatusBadRequest, "top_p %v: want a value in (0, 1]", p.topP)
		return
	case p.n < 1 || p.n > 128:
		writeError(w, http.StatusBadRequest, "n %d: want 1..128", p.n)
		return
	case p.logprobs > 20:
		writeError(w, http.StatusBadRequest, "logprobs %d: want at most 20", p.logprobs)
		return
	}
	if p.echo {
		cost := float64(len(prompt)) * float64(p.n) * float64(1+max(p.logprobs, 0)) * 8
		if cost > maxEchoBytes {
			writeError(w, http.StatusBadRequest, "echo of a %d-byte prompt with n %d and logprobs %d would make a response of about %.0f MB: want at most %d MB", len(prompt), p.n, p.logprobs, cost/1e6, maxEchoBytes>>20)
			return
		}
	}
	if req.Seed != nil {
		p.seed = uint64(*req.Seed)
	} else {
		h.mu.Lock()
		p.seed = h.rng.Uint64() >> 1
		h.mu.Unlock()
	}
	if h.cfg.Latency > 0 {
		if err := sleep(r.Context(), h.cfg.Latency); err != nil {
			return // the client went away
		}
	}
	if h.cfg.MaxN > 0 {
		p.n = min(p.n, h.cfg.MaxN)
	}
	if fault == FewerChoices {
		p.n = max(1, p.n/2)
	}
	var (
		resp *llm.CompletionResponse
		gens [][]token
		err  error
	)
	if rep, ok := h.reply(prompt); ok {
		resp, gens = scripted(rep, p)
	} else if resp, gens, err = h.complete(prompt, p); err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	resp.Model = h.cfg.ModelName
	resp.ID = fmt.Sprintf("cmpl-%d", h.requests.Load())
	resp.Object = "text_completion"
	resp.Created = time.Now().Unix()
	if req.Stream {
		h.stream(w, chat, resp, gens, p.logprobs)
		return
	}
	var out any = resp
	if chat {
		out = chatResponse(resp, gens, p.logprobs)
	}
	h.write(w, fault, out)
}

func (h *Handler) reply(prompt string) (Reply, bool) {
	if h.cfg.Reply == nil {
		return nil, false
	}
	return h.cfg.Reply(prompt)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

type params struct {
	maxTokens   int
	temperature float64
	topP        float64
	n           int
	logprobs    int // -1: none
	echo        bool
	stop        []string
	seed        uint64
}

// The states of the prompt grammar: what the next token is.
const (
	expectInput    = iota // "Input:"
	expectX               // " <input>"
	expectXEnd            // "\n"
	expectLabelTag        // "Label:"
	expectY               // " <label>"
	expectYEnd            // "\n"
	expectBlank           // "\n"
)

// fixedText is the certain token of each state that has one.
var fixedText = map[int]string{expectInput: "Input:", expectXEnd: "\n", expectLabelTag: "Label:", expectYEnd: "\n", expectBlank: "\n"}

type token struct {
	text string
	logp float64
	top  map[string]float64 // alternatives of an uncertain token
}

// reader is the model's state along a token sequence.
type reader struct {
	h     *Handler
	state int
	x     int // input of the example being read
	post  *categorical.Posterior
}

// distribution returns the model's distribution of the next token in an
// uncertain state, with the token texts.
func (rd *reader) distribution() ([]float64, []string) {
	if rd.state == expectX {
		names := make([]string, len(rd.h.cfg.Inputs))
		for i, s := range rd.h.cfg.Inputs {
			names[i] = " " + s
		}
		return categorical.Uniform(len(names)), names
	}
	names := make([]string, len(rd.h.cfg.Labels))
	for i, s := range rd.h.cfg.Labels {
		names[i] = " " + s
	}
	return rd.post.Predictive(rd.x), names
}

// advance moves past a token: value is the input or label index of an
// uncertain token.
func (rd *reader) advance(value int) error {
	switch rd.state {
	case expectX:
		rd.x = value
	case expectY:
		next, err := rd.post.Update(categorical.Example{X: rd.x, Y: value})
		if err != nil {
			return err
		}
		rd.post = next
	}
	rd.state = (rd.state + 1) % 7
	return nil
}

func topAlternatives(p []float64, names []string, k int) map[string]float64 {
	if k <= 0 {
		return nil
	}
	idx := make([]int, len(p))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case p[a] > p[b]:
			return -1
		case p[a] < p[b]:
			return 1
		}
		return 0
	})
	out := map[string]float64{}
	for _, i := range idx[:min(k, len(idx))] {
		out[names[i]] = math.Log(p[i])
	}
	return out
}

// tokenize reads the prompt as tokens of the grammar with their
// log-probabilities, leaving rd in the state after the last one.
func (h *Handler) tokenize(prompt string, rd *reader, k int) ([]token, error) {
	var toks []token
	pos := 0
	for pos < len(prompt) {
		rest := prompt[pos:]
		if fixed, ok := fixedText[rd.state]; ok {
			if !strings.HasPrefix(rest, fixed) {
				if strings.HasPrefix(fixed, rest) {
					return nil, fmt.Errorf("prompt ends inside the token %q", fixed)
				}
				return nil, fmt.Errorf("prompt character %d: want %q, found %q", utf8.RuneCountInString(prompt[:pos]), fixed, abbreviate(rest, 20))
			}
			toks = append(toks, token{text: fixed})
			pos += len(fixed)
			_ = rd.advance(0)
			continue
		}
		// An input or label name: a space, then the rest of the line.
		if !strings.HasPrefix(rest, " ") {
			return nil, fmt.Errorf("prompt character %d: want a space before the name, found %q", utf8.RuneCountInString(prompt[:pos]), abbreviate(rest, 20))
		}
		name := rest[1:]
		if i := strings.IndexByte(name, '\n'); i >= 0 {
			name = name[:i]
		}
		index, kind := h.inputs, "input"
		if rd.state == expectY {
			index, kind = h.labels, "label"
		}
		v, ok := index[name]
		if !ok {
			return nil, fmt.Errorf("unknown %s %q", kind, abbreviate(name, 40))
		}
		p, names := rd.distribution()
		toks = append(toks, token{text: " " + name, logp: math.Log(p[v]), top: topAlternatives(p, names, k)})
		pos += 1 + len(name)
		if err := rd.advance(v); err != nil {
			return nil, err
		}
	}
	return toks, nil
}

// sampling turns the model's probabilities into the sampling distribution
// for a temperature and top_p, keeping the outcomes in order (so that
// temperature 1 and top_p 1 sample exactly as categorical.Pick does).
func sampling(p []float64, temperature, topP float64) []float64 {
	q := slices.Clone(p)
	if temperature == 0 {
		best := 0
		for i, v := range p {
			if v > p[best] {
				best = i
			}
		}
		clear(q)
		q[best] = 1
		return q
	}
	if temperature != 1 {
		s := 0.0
		for i, v := range q {
			q[i] = math.Pow(v, 1/temperature)
			s += q[i]
		}
		for i := range q {
			q[i] /= s
		}
	}
	if topP < 1 {
		idx := make([]int, len(q))
		for i := range idx {
			idx[i] = i
		}
		slices.SortStableFunc(idx, func(a, b int) int {
			switch {
			case q[a] > q[b]:
				return -1
			case q[a] < q[b]:
				return 1
			}
			return 0
		})
		keep := make([]bool, len(q))
		cum := 0.0
		for _, i := range idx {
			keep[i] = true
			cum += q[i]
			if cum >= topP {
				break
			}
		}
		s := 0.0
		for i := range q {
			if !keep[i] {
				q[i] = 0
			}
			s += q[i]
		}
		for i := range q {
			q[i] /= s
		}
	}
	return q
}

// complete continues prompt n times; it returns the completions and the
// tokens each generated.
func (h *Handler) complete(prompt string, p params) (*llm.CompletionResponse, [][]token, error) {
	post, err := h.cfg.Model.Posterior(nil)
	if err != nil {
		return nil, nil, err
	}
	start := reader{h: h, post: post}
	promptToks, err := h.tokenize(prompt, &start, p.logprobs)
	if err != nil {
		return nil, nil, fmt.Errorf("%v; %s", err, h.promptFormat())
	}
	var gens [][]token
	stream := categorical.NewStream(p.seed)
	resp := &llm.CompletionResponse{}
	promptLen := utf8.RuneCountInString(prompt)
	completionTokens := 0
	for c := range p.n {
		rd := start
		var gen []token
		var text strings.Builder
		finish := "length"
		for len(gen) < p.maxTokens {
			var t token
			answer := false // t is a label: the end of an answer
			if fixed, ok := fixedText[rd.state]; ok {
				t = token{text: fixed}
				_ = rd.advance(0)
			} else {
				answer = rd.state == expectY
				dist, names := rd.distribution()
				v := categorical.Pick(sampling(dist, p.temperature, p.topP), stream.Float64())
				t = token{text: names[v], logp: math.Log(dist[v]), top: topAlternatives(dist, names, p.logprobs)}
				if err := rd.advance(v); err != nil {
					return nil, nil, err
				}
			}
			gen = append(gen, t)
			text.WriteString(t.text)
			if cut := firstStop(text.String(), p.stop); cut >= 0 {
				// Drop the text from the stop sequence on, and the tokens
				// that start there.
				s := text.String()[:cut]
				text.Reset()
				text.WriteString(s)
				off := 0
				for i, g := range gen {
					if off >= cut {
						gen = gen[:i]
						break
					}
					off += len(g.text)
				}
				finish = "stop"
				break
			}
			if answer && len(gen) < p.maxTokens {
				// The model's end of text, which takes a token's room
				// as a language model's end-of-text token does: an
				// answer is one label. A client asking for an imagined
				// example (stop "\n\n") gets the same text as before.
				finish = "stop"
				break
			}
		}
		gens = append(gens, gen)
		completionTokens += len(gen)
		ch := llm.CompletionChoice{Index: c, Text: text.String(), FinishReason: finish}
		if p.echo {
			ch.Text = prompt + ch.Text
		}
		if p.logprobs >= 0 {
			lp := &llm.Logprobs{}
			off := 0
			add := func(t token, first bool) {
				lp.Tokens = append(lp.Tokens, t.text)
				if first {
					lp.TokenLogprobs = append(lp.TokenLogprobs, nil)
				} else {
					v := t.logp
					lp.TokenLogprobs = append(lp.TokenLogprobs, &v)
				}
				if p.logprobs > 0 {
					lp.TopLogprobs = append(lp.TopLogprobs, t.top)
				}
				lp.TextOffset = append(lp.TextOffset, off)
				off += utf8.RuneCountInString(t.text)
			}
			if p.echo {
				for i, t := range promptToks {
					add(t, i == 0)
				}
			} else {
				// Offsets of generated tokens continue from the end of the
				// prompt, as in OpenAI's API.
				off = promptLen
			}
			for _, t := range gen {
				add(t, false)
			}
			ch.Logprobs = lp
		}
		resp.Choices = append(resp.Choices, ch)
	}
	resp.Usage = &llm.Usage{PromptTokens: len(promptToks), CompletionTokens: completionTokens, TotalTokens: len(promptToks) + completionTokens}
	return resp, gens, nil
}

// promptFormat describes the prompts the model reads, for the error
// of a prompt in another format.
func (h *Handler) promptFormat() string {
	ex := func(i int) string { return "Input: " + h.cfg.Inputs[i%len(h.cfg.Inputs)] }
	return fmt.Sprintf("the prompt format is examples %q, each ended by a blank line, then the query %q "+
		"(no blank line after it); inputs %s; labels %s",
		ex(0)+"\nLabel: "+h.cfg.Labels[0]+"\n\n", ex(1)+"\n", strings.Join(h.cfg.Inputs, ", "), strings.Join(h.cfg.Labels, ", "))
}

// firstStop returns the index of the earliest stop sequence in s, or -1.
func firstStop(s string, stop []string) int {
	cut := -1
	for _, st := range stop {
		if st == "" {
			continue
		}
		if i := strings.Index(s, st); i >= 0 && (cut < 0 || i < cut) {
			cut = i
		}
	}
	return cut
}

func abbreviate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "..."
}

// Timeouts of Serve's server: a whole request (headers and body) must
// arrive within ServeReadTimeout, a response be written within
// ServeWriteTimeout of the request's headers (add the configured Latency),
// and an idle keep-alive connection is closed after ServeIdleTimeout.
var (
	ServeReadTimeout  = 30 * time.Second
	ServeWriteTimeout = 2 * time.Minute
	ServeIdleTimeout  = 60 * time.Second
)

// Serve serves h on ln until ctx ends, then shuts down gracefully,
// giving requests in progress up to 5 seconds. It returns nil after a
// shutdown and the server's error if it stops on its own.
func Serve(ctx context.Context, ln net.Listener, h http.Handler) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, MaxHeaderBytes: 64 << 10,
		// A client that trickles its body or idles on a kept-alive
		// connection must not hold it forever.
		ReadTimeout: ServeReadTimeout, WriteTimeout: ServeWriteTimeout, IdleTimeout: ServeIdleTimeout}
	if hh, ok := h.(*Handler); ok {
		srv.WriteTimeout += hh.cfg.Latency
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
		return nil
	case err := <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	}
}
