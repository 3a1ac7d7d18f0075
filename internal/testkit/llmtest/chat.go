package llmtest

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/genlens/genlens/llm"
)

// Fault is a way to answer a request badly, as real servers do under load
// or behind a broken proxy.
type Fault int

const (
	// NoFault answers normally.
	NoFault Fault = iota
	// RateLimit answers 429 Too Many Requests with Config.RetryAfter.
	RateLimit
	// ServerError answers 500 with an OpenAI-style error body.
	ServerError
	// Hang never answers: the handler waits until the client gives up.
	Hang
	// CutBody sends the headers of the real answer, Content-Length
	// included, and half of its body, then closes the connection.
	CutBody
	// WrongJSON answers 200 with JSON of the wrong shape.
	WrongJSON
	// FewerChoices answers half the choices asked for (at least one).
	FewerChoices
)

// fault numbers the request, asks Config.Fault what to do with it, and
// answers the faults that need no response body (429, 500, a hang).
func (h *Handler) fault(w http.ResponseWriter, r *http.Request) Fault {
	n := h.requests.Add(1)
	if h.cfg.Fault == nil {
		return NoFault
	}
	f := h.cfg.Fault(n)
	switch f {
	case RateLimit:
		w.Header().Set("Retry-After", h.cfg.RetryAfter)
		writeError(w, http.StatusTooManyRequests, "rate limit reached, retry after %s s", h.cfg.RetryAfter)
	case ServerError:
		writeError(w, http.StatusInternalServerError, "the model worker died")
	case Hang:
		// Read the body first: the server notices a client that closes
		// the connection only once it reads from it again.
		_, _ = io.Copy(io.Discard, http.MaxBytesReader(w, r.Body, h.cfg.MaxBodyBytes))
		<-r.Context().Done()
	}
	return f
}

// write sends v as the answer, or garbles it as fault says.
func (h *Handler) write(w http.ResponseWriter, fault Fault, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	data = append(data, '\n')
	w.Header().Set("Content-Type", "application/json")
	switch fault {
	case WrongJSON:
		data = []byte(`{"object":"list","choices":{"text":42},"data":"none"}` + "\n")
	case CutBody:
		w.Header().Set("Content-Length", strconv.Itoa(len(data)))
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(data[:len(data)/2])
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		// Abort the response: the server closes the connection without
		// sending the rest.
		panic(http.ErrAbortHandler)
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	_, _ = w.Write(data)
}

// chatPrompt is the text the model continues for a chat request: the
// contents of the messages, concatenated in order. Roles are not part of
// the prompt grammar.
func chatPrompt(req request) (string, error) {
	if len(req.Prompt) > 0 {
		return "", errors.New(`chat completions take "messages", not "prompt"`)
	}
	var msgs []struct {
		Role    string  `json:"role"`
		Content *string `json:"content"`
	}
	if err := json.Unmarshal(req.Messages, &msgs); err != nil || len(msgs) == 0 {
		return "", errors.New(`"messages" must be a non-empty list of {"role", "content"} with string contents`)
	}
	var b strings.Builder
	for i, m := range msgs {
		switch m.Role {
		case "system", "user", "assistant":
		default:
			return "", fmt.Errorf("message %d: role %q: want system, user or assistant", i, m.Role)
		}
		if m.Content == nil {
			return "", fmt.Errorf("message %d has no content", i)
		}
		b.WriteString(*m.Content)
	}
	return b.String(), nil
}

// chatCompletion is llm.ChatCompletion with the chat API's
// log-probabilities on each choice.
type chatCompletion struct {
	ID      string       `json:"id"`
	Object  string       `json:"object"`
	Created int64        `json:"created"`
	Model   string       `json:"model"`
	Choices []chatChoice `json:"choices"`
	Usage   *llm.Usage   `json:"usage,omitempty"`
}

type chatChoice struct {
	Index        int             `json:"index"`
	Message      llm.ChatMessage `json:"message"`
	Logprobs     *chatLogprobs   `json:"logprobs,omitempty"`
	FinishReason string          `json:"finish_reason"`
}

// chatLogprobs is the chat API's choices[].logprobs: one entry per
// generated token, with its top alternatives, most likely first.
type chatLogprobs struct {
	Content []chatTokenLogprob `json:"content"`
}

type chatTokenLogprob struct {
	Token       string           `json:"token"`
	Logprob     float64          `json:"logprob"`
	Bytes       []int            `json:"bytes"`
	TopLogprobs []chatTopLogprob `json:"top_logprobs"`
}

type chatTopLogprob struct {
	Token   string  `json:"token"`
	Logprob float64 `json:"logprob"`
	Bytes   []int   `json:"bytes"`
}

func tokenBytes(s string) []int {
	b := make([]int, len(s))
	for i := range len(s) {
		b[i] = int(s[i])
	}
	return b
}

// chatLogprobsOf is the chat shape of the tokens gen with k alternatives
// each (a certain token's only alternative is itself).
func chatLogprobsOf(gen []token, k int) *chatLogprobs {
	lp := &chatLogprobs{Content: []chatTokenLogprob{}}
	for _, t := range gen {
		e := chatTokenLogprob{Token: t.text, Logprob: t.logp, Bytes: tokenBytes(t.text), TopLogprobs: []chatTopLogprob{}}
		top := t.top
		if top == nil && k > 0 {
			top = map[string]float64{t.text: t.logp}
		}
		for tok, v := range top {
			e.TopLogprobs = append(e.TopLogprobs, chatTopLogprob{Token: tok, Logprob: v, Bytes: tokenBytes(tok)})
		}
		slices.SortFunc(e.TopLogprobs, func(a, b chatTopLogprob) int {
			if c := cmp.Compare(b.Logprob, a.Logprob); c != 0 {
				return c
			}
			return strings.Compare(a.Token, b.Token)
		})
		lp.Content = append(lp.Content, e)
	}
	return lp
}

// chatResponse is r in the chat format; with logprobs (k >= 0) each
// choice carries its tokens' log-probabilities.
func chatResponse(r *llm.CompletionResponse, gens [][]token, k int) chatCompletion {
	out := chatCompletion{ID: "chat" + r.ID, Object: "chat.completion", Created: r.Created, Model: r.Model, Usage: r.Usage}
	for i, c := range r.Choices {
		ch := chatChoice{Index: c.Index, FinishReason: c.FinishReason, Message: llm.ChatMessage{Role: "assistant", Content: &c.Text}}
		if k >= 0 {
			ch.Logprobs = chatLogprobsOf(gens[i], k)
		}
		out.Choices = append(out.Choices, ch)
	}
	return out
}

// stream sends r as server-sent events, one event per generated token
// and choice, then each choice's finish reason, then "data: [DONE]", in
// the chat or the completions format.
func (h *Handler) stream(w http.ResponseWriter, chat bool, r *llm.CompletionResponse, gens [][]token, k int) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	send := func(choice map[string]any) bool {
		ev := map[string]any{"id": r.ID, "created": r.Created, "model": r.Model, "choices": []any{choice}}
		if chat {
			ev["id"], ev["object"] = "chat"+r.ID, "chat.completion.chunk"
		} else {
			ev["object"] = "text_completion"
		}
		b, err := json.Marshal(ev)
		if err != nil {
			return false
		}
		if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
			return false // the client went away
		}
		if fl != nil {
			fl.Flush()
		}
		return true
	}
	for i, c := range r.Choices {
		if chat && !send(map[string]any{"index": c.Index, "delta": map[string]any{"role": "assistant", "content": ""}, "logprobs": nil, "finish_reason": nil}) {
			return
		}
		for _, t := range gens[i] {
			one := []token{t}
			var ev map[string]any
			if chat {
				ev = map[string]any{"index": c.Index, "delta": map[string]any{"content": t.text}, "logprobs": nil, "finish_reason": nil}
				if k >= 0 {
					ev["logprobs"] = chatLogprobsOf(one, k)
				}
			} else {
				ev = map[string]any{"index": c.Index, "text": t.text, "logprobs": nil, "finish_reason": nil}
				if k >= 0 {
					v := t.logp
					lp := &llm.Logprobs{Tokens: []string{t.text}, TokenLogprobs: []*float64{&v}}
					if k > 0 {
						lp.TopLogprobs = []map[string]float64{t.top}
					}
					ev["logprobs"] = lp
				}
			}
			if !send(ev) {
				return
			}
		}
		last := map[string]any{"index": c.Index, "logprobs": nil, "finish_reason": c.FinishReason}
		if chat {
			last["delta"] = map[string]any{}
		} else {
			last["text"] = ""
		}
		if !send(last) {
			return
		}
	}
	_, _ = fmt.Fprint(w, "data: [DONE]\n\n")
	if fl != nil {
		fl.Flush()
	}
}

// maxEmbeddingInputs bounds the inputs of one embeddings request.
const maxEmbeddingInputs = 2048

func (h *Handler) embeddings(w http.ResponseWriter, r *http.Request) {
	if !h.authorized(w, r) {
		return
	}
	fault := h.fault(w, r)
	if fault == Hang || fault == RateLimit || fault == ServerError {
		return
	}
	var req struct {
		Model string          `json:"model"`
		Input json.RawMessage `json:"input"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, h.cfg.MaxBodyBytes)).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "malformed request: %v", err)
		return
	}
	if req.Model != h.cfg.EmbeddingModel {
		writeError(w, http.StatusNotFound, "embedding model %q not found (this server has %q)", req.Model, h.cfg.EmbeddingModel)
		return
	}
	var inputs []string
	var one string
	if json.Unmarshal(req.Input, &one) == nil {
		inputs = []string{one}
	} else if err := json.Unmarshal(req.Input, &inputs); err != nil || len(inputs) == 0 || len(inputs) > maxEmbeddingInputs {
		writeError(w, http.StatusBadRequest, "input must be a string or a list of 1..%d strings", maxEmbeddingInputs)
		return
	}
	if h.cfg.Latency > 0 {
		if err := sleep(r.Context(), h.cfg.Latency); err != nil {
			return
		}
	}
	out := llm.EmbeddingsResponse{Object: "list", Model: h.cfg.EmbeddingModel, Usage: &llm.Usage{}}
	for i, s := range inputs {
		out.Data = append(out.Data, llm.Embedding{Object: "embedding", Index: &i, Embedding: Embedding(s, h.cfg.EmbeddingDim)})
		n := len(strings.Fields(s))
		out.Usage.PromptTokens += n
		out.Usage.TotalTokens += n
	}
	h.write(w, fault, out)
}

// Embedding is the test server's embedding of s: the words of s (lower
// case, letters and digits) and their character trigrams hashed (FNV-1a)
// into dim buckets with a hashed sign, then scaled to unit length. Equal
// texts get equal vectors, texts sharing words get close ones; the empty
// text gets the first unit vector.
func Embedding(s string, dim int) []float64 {
	v := make([]float64, dim)
	add := func(feature string, weight float64) {
		f := fnv.New64a()
		_, _ = f.Write([]byte(feature))
		x := f.Sum64()
		sign := 1.0
		if x>>63 == 1 {
			sign = -1
		}
		v[int(x%uint64(dim))] += sign * weight
	}
	words := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	for _, w := range words {
		add("w:"+w, 1)
		padded := "^" + w + "$"
		for i := 0; i+3 <= len(padded); i++ {
			add("t:"+padded[i:i+3], 0.5)
		}
	}
	norm := 0.0
	for _, x := range v {
		norm += x * x
	}
	if norm == 0 {
		v[0] = 1
		return v
	}
	norm = math.Sqrt(norm)
	for i := range v {
		v[i] /= norm
	}
	return v
}
