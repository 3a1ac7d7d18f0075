package server

// The OpenAI-compatible uncertainty proxy: POST /v1/chat/completions is
// passed to the upstream as it is, while k samples of the same messages
// are drawn beside it and scored; the answer comes back with one added
// top-level key "genlens" and the header X-Genlens-Uncertainty.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"genlens/llm"
	"genlens/store"
	"genlens/uncertainty"
)

// Defaults and bounds of the proxy.
const (
	DefaultLLMSamples = 5
	MaxLLMSamples     = 64
	DefaultLLMScore   = "kernel-entropy"
	DefaultLLMTimeout = 2 * time.Minute
	// maxUpstreamBody bounds an upstream's non-streamed answer.
	maxUpstreamBody = 32 << 20
	// maxStoredAnswer bounds the answer text kept in the store.
	maxStoredAnswer = 64 << 10
	// maxModelLabels bounds the distinct model names in metric labels;
	// callers choose the name, and each would be a new series.
	maxModelLabels = 64
)

// LLMOptions configure the proxy; a zero Upstream leaves it off.
type LLMOptions struct {
	// Upstream is the API root of the OpenAI-compatible server, as
	// client libraries take it: http://127.0.0.1:8000/v1 serves
	// http://127.0.0.1:8000/v1/chat/completions.
	Upstream string
	// APIKey, when set, is sent upstream as "Authorization: Bearer
	// APIKey". The caller's own Authorization header never is.
	APIKey string
	// Samples is k, the samples drawn per request (0: DefaultLLMSamples).
	Samples int
	// Score names the uncertainty score (LLMScores; "": DefaultLLMScore).
	Score string
	// Timeout cuts an upstream that does not answer: the whole answer,
	// the sampling, and every gap between two chunks of a stream (0:
	// DefaultLLMTimeout).
	Timeout time.Duration
	// Sampler draws the samples; required with Upstream.
	Sampler Sampler
	// Client passes requests through; nil means a client of its own.
	Client *http.Client
}

// llmScore maps samples to an uncertainty.
type llmScore func(ctx context.Context, samples []string) (float64, error)

// llmScores are the scores of package uncertainty that grow with
// uncertainty (lexical similarity, a confidence, is left out), each with
// the options `genlens entropy` uses by default: uncertainty's
// DefaultSequence for kernel entropy, and its default similarity and KLE
// time for the graph scores.
var llmScores = map[string]llmScore{
	string(uncertainty.ScoreKernelEntropy): scoreWith(uncertainty.ScoreKernelEntropy),
	string(uncertainty.ScoreKLE):           scoreWith(uncertainty.ScoreKLE),
	string(uncertainty.ScoreEigV):          scoreWith(uncertainty.ScoreEigV),
	string(uncertainty.ScoreDegree):        scoreWith(uncertainty.ScoreDegree),
}

// LLMScores lists the uncertainty scores the proxy computes.
func LLMScores() []string {
	names := make([]string, 0, len(llmScores))
	for n := range llmScores {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

func scoreWith(score uncertainty.Score) llmScore {
	opt := uncertainty.Options{Sequence: uncertainty.DefaultSequence, Scores: []uncertainty.Score{score}}
	return func(ctx context.Context, samples []string) (float64, error) {
		res, _, err := uncertainty.Evaluate(ctx, []uncertainty.Prompt{{ID: "request", Samples: samples}}, opt)
		if err != nil {
			return math.NaN(), err
		}
		u := res[0].Value(score)
		if math.IsNaN(u) {
			return math.NaN(), errors.New(res[0].Reason)
		}
		return u, nil
	}
}

// llmProxy is the configured proxy.
type llmProxy struct {
	s        *Server
	endpoint string // Upstream + /chat/completions
	apiKey   string
	k        int
	score    string
	scoreFn  llmScore
	timeout  time.Duration
	sampler  Sampler
	client   *http.Client

	mu     sync.Mutex
	models map[string]bool // model names given their own metric label

	// The recorder stores requests in batches (store.InsertLLMRequests):
	// one commit per request would bound a busy proxy by the store's
	// fsyncs. A request is acknowledged before it is stored, so a crash
	// loses the few still queued.
	records chan store.LLMRequest
	recDone chan struct{}
	recMu   sync.RWMutex // closed and the send on records
	closed  bool
}

// recordBatch bounds the requests stored in one transaction.
const recordBatch = 256

func (p *llmProxy) runRecorder() {
	defer close(p.recDone)
	for r := range p.records {
		batch := []store.LLMRequest{r}
	more:
		for len(batch) < recordBatch {
			select {
			case r, ok := <-p.records:
				if !ok {
					break more
				}
				batch = append(batch, r)
			default:
				break more
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if err := p.s.store.InsertLLMRequests(ctx, batch); err != nil {
			p.s.log.Error("llm proxy: storing requests", "n", len(batch), "err", err)
		}
		cancel()
	}
}

// close stores the queued requests and stops the recorder.
func (p *llmProxy) close(ctx context.Context) error {
	p.recMu.Lock()
	if !p.closed {
		p.closed = true
		close(p.records)
	}
	p.recMu.Unlock()
	select {
	case <-p.recDone:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("llm proxy: storing the last requests: %w", ctx.Err())
	}
}

func newLLMProxy(s *Server, o LLMOptions) (*llmProxy, error) {
	o.EnsureDefaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	p := &llmProxy{s: s, endpoint: strings.TrimRight(o.Upstream, "/") + "/chat/completions", apiKey: o.APIKey,
		k: o.Samples, score: o.Score, scoreFn: llmScores[o.Score], timeout: o.Timeout, sampler: o.Sampler, client: o.Client, models: map[string]bool{},
		records: make(chan store.LLMRequest, 4*recordBatch), recDone: make(chan struct{})}
	if p.sampler == nil {
		return nil, errors.New("server: llm upstream without a sampler")
	}
	if p.client == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = 256 // callers in parallel reuse their connections
		p.client = &http.Client{Transport: t}
	}
	go p.runRecorder()
	return p, nil
}

func (p *llmProxy) route(mux *http.ServeMux) {
	// Its bodies count among the bodies in flight, as the API's do.
	mux.Handle("POST /v1/chat/completions", p.auth(p.s.limitBodies(http.HandlerFunc(p.chat))))
}

// auth is Server.auth with OpenAI's error shape: client libraries send
// the genlens token as their API key.
func (p *llmProxy) auth(next http.Handler) http.Handler {
	if p.s.token == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !p.s.authorized(r) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="genlens"`)
			writeOpenAIError(w, http.StatusUnauthorized, "invalid_request_error", "invalid_api_key",
				"missing or wrong bearer token: send the genlens server's token as the API key")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// openAIError is the error body of the OpenAI API.
type openAIError struct {
	Error struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    any     `json:"code"`
	} `json:"error"`
}

func openAIErrorBody(typ string, code any, msg string) []byte {
	var e openAIError
	e.Error.Message, e.Error.Type, e.Error.Code = msg, typ, code
	b, _ := json.Marshal(e)
	return append(b, '\n')
}

func writeOpenAIError(w http.ResponseWriter, status int, typ string, code any, msg string) {
	b := openAIErrorBody(typ, code, msg)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	w.Write(b)
}

// chatRequest is what the proxy reads of the caller's request; the
// request itself goes upstream byte for byte.
type chatRequest struct {
	Model     string          `json:"model"`
	Messages  json.RawMessage `json:"messages"`
	Stream    bool            `json:"stream"`
	MaxTokens *int            `json:"max_tokens"`
	// Carried to the samples as they are.
	MaxCompletionTokens json.RawMessage `json:"max_completion_tokens"`
	Stop                json.RawMessage `json:"stop"`
}

// sampleRequest is the request of the k samples: the caller's messages
// (each sent as it came, content parts included), model and length
// limits, at temperature 1.
func (p *llmProxy) sampleRequest(cr *chatRequest) (llm.ChatRequest, error) {
	var msgs []llm.Message
	if err := json.Unmarshal(cr.Messages, &msgs); err != nil {
		return llm.ChatRequest{}, fmt.Errorf("messages: %v", err)
	}
	if len(msgs) == 0 {
		return llm.ChatRequest{}, errors.New("no messages")
	}
	one := 1.0
	req := llm.ChatRequest{Model: cr.Model, N: p.k, Temperature: &one, Messages: msgs}
	if cr.MaxTokens != nil {
		req.MaxTokens = *cr.MaxTokens
	}
	for name, v := range map[string]json.RawMessage{"max_completion_tokens": cr.MaxCompletionTokens, "stop": cr.Stop} {
		if len(v) > 0 && string(v) != "null" {
			if req.Extra == nil {
				req.Extra = map[string]json.RawMessage{}
			}
			req.Extra[name] = v
		}
	}
	return req, nil
}

// messagesHash is the hex SHA-256 of the messages in compact JSON, so
// that the same conversation hashes alike whatever its spacing.
func messagesHash(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		b.Reset()
		b.Write(raw)
	}
	h := sha256.Sum256(b.Bytes())
	return hex.EncodeToString(h[:])
}

// scored is the outcome of sampling and scoring.
type scored struct {
	uncertainty float64
	err         error
	seconds     float64
}

// draw samples and scores in the background; the channel receives one
// outcome.
func (p *llmProxy) draw(ctx context.Context, req llm.ChatRequest, reqErr error) <-chan scored {
	out := make(chan scored, 1)
	if reqErr != nil {
		out <- scored{uncertainty: math.NaN(), err: reqErr}
		return out
	}
	go func() {
		start := time.Now()
		u, err := p.sampleAndScore(ctx, req)
		out <- scored{uncertainty: u, err: err, seconds: time.Since(start).Seconds()}
	}()
	return out
}

func (p *llmProxy) sampleAndScore(ctx context.Context, req llm.ChatRequest) (float64, error) {
	choices, _, err := p.sampler.Sample(ctx, req, p.k)
	if err != nil {
		// The caller sees this message: the upstream's address is the
		// proxy's configuration, not the caller's business.
		msg := strings.ReplaceAll(err.Error(), strings.TrimSuffix(p.endpoint, "/chat/completions"), "upstream")
		return math.NaN(), errors.New("sampling: " + msg)
	}
	if len(choices) != p.k {
		return math.NaN(), fmt.Errorf("sampling: %d samples, want %d", len(choices), p.k)
	}
	texts := make([]string, len(choices))
	for i, c := range choices {
		texts[i] = c.Text
	}
	u, err := p.scoreFn(ctx, texts)
	if err != nil {
		return math.NaN(), fmt.Errorf("scoring: %w", err)
	}
	return u, nil
}

// genlensKey is the value of the added "genlens" key.
func (p *llmProxy) genlensKey(sc scored) []byte {
	var v any
	if sc.err != nil {
		v = struct {
			Error string `json:"error"`
		}{sc.err.Error()}
	} else {
		v = struct {
			Uncertainty float64 `json:"uncertainty"`
			Score       string  `json:"score"`
			Samples     int     `json:"samples"`
		}{sc.uncertainty, p.score, p.k}
	}
	b, _ := json.Marshal(v)
	return b
}

// withKey adds "genlens": val as the last key of the JSON object body,
// leaving every other byte as it was; ok is false when body is not an
// object.
func withKey(body, val []byte) ([]byte, bool) {
	t := bytes.TrimRight(body, " \t\r\n")
	if len(t) < 2 || t[len(t)-1] != '}' || bytes.TrimLeft(t, " \t\r\n")[0] != '{' || !json.Valid(t) {
		return nil, false
	}
	inner := bytes.TrimSpace(t[bytes.IndexByte(t, '{')+1 : len(t)-1])
	out := make([]byte, 0, len(body)+len(val)+16)
	out = append(out, t[:len(t)-1]...)
	if len(inner) > 0 {
		out = append(out, ',')
	}
	out = append(out, `"genlens":`...)
	out = append(out, val...)
	out = append(out, '}')
	return append(out, body[len(t):]...), true
}

// hop-by-hop and recomputed headers, not copied from the upstream's
// answer.
var skipHeaders = map[string]bool{"Connection": true, "Keep-Alive": true, "Transfer-Encoding": true, "Upgrade": true,
	"Proxy-Authenticate": true, "Proxy-Connection": true, "Te": true, "Trailer": true, "Content-Length": true, "Set-Cookie": true}

func copyHeaders(dst, src http.Header) {
	for k, vs := range src {
		if !skipHeaders[k] {
			dst[k] = slices.Clone(vs)
		}
	}
}

// chat serves POST /v1/chat/completions.
func (p *llmProxy) chat(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rec := store.LLMRequest{Time: start.UTC(), Score: p.score, Samples: p.k, Uncertainty: math.NaN()}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, p.s.maxBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeOpenAIError(w, http.StatusRequestEntityTooLarge, "invalid_request_error", nil, fmt.Sprintf("request body over %d bytes", mbe.Limit))
			return
		}
		writeOpenAIError(w, http.StatusBadRequest, "invalid_request_error", nil, "reading the request body: "+err.Error())
		return
	}
	var cr chatRequest
	if err := json.Unmarshal(body, &cr); err != nil {
		writeOpenAIError(w, http.StatusBadRequest, "invalid_request_error", nil, "request body: "+jsonError(err).Error())
		return
	}
	rec.Model, rec.Stream, rec.MessagesHash = cr.Model, cr.Stream, messagesHash(cr.Messages)
	sreq, reqErr := p.sampleRequest(&cr)

	// A long answer or stream must not be cut by the server's write
	// timeout; the proxy's own timeout bounds the upstream instead.
	rc := http.NewResponseController(w)
	if cr.Stream {
		rc.SetWriteDeadline(time.Time{})
	} else {
		rc.SetWriteDeadline(time.Now().Add(2*p.timeout + time.Minute))
	}

	sctx, scancel := context.WithTimeout(r.Context(), p.timeout)
	defer scancel()
	result := p.draw(sctx, sreq, reqErr)

	// The upstream call: cut when it stays silent for the timeout (for
	// a stream, between two chunks; otherwise for the whole answer).
	uctx, ucancel := context.WithCancelCause(r.Context())
	defer ucancel(nil)
	errSilent := fmt.Errorf("upstream silent for %s, the proxy's timeout", p.timeout)
	idle := time.AfterFunc(p.timeout, func() { ucancel(errSilent) })
	defer idle.Stop()
	ureq, err := http.NewRequestWithContext(uctx, http.MethodPost, p.endpoint, bytes.NewReader(body))
	if err != nil {
		p.fail(w, r, &rec, scancel, start, http.StatusInternalServerError, "server_error", err.Error())
		return
	}
	ureq.Header.Set("Content-Type", "application/json")
	if a := r.Header.Get("Accept"); a != "" {
		ureq.Header.Set("Accept", a)
	}
	if p.apiKey != "" {
		ureq.Header.Set("Authorization", "Bearer "+p.apiKey)
	}
	ustart := time.Now()
	resp, err := p.client.Do(ureq)
	if err != nil {
		status, msg := p.upstreamFailure(uctx, err)
		p.fail(w, r, &rec, scancel, start, status, "upstream_error", msg)
		return
	}
	defer resp.Body.Close()

	if resp.StatusCode < 200 || resp.StatusCode > 299 || !cr.Stream {
		b, err := io.ReadAll(io.LimitReader(resp.Body, maxUpstreamBody+1))
		rec.UpstreamSeconds = time.Since(ustart).Seconds()
		switch {
		case err != nil:
			status, msg := p.upstreamFailure(uctx, err)
			p.fail(w, r, &rec, scancel, start, status, "upstream_error", msg)
		case len(b) > maxUpstreamBody:
			p.fail(w, r, &rec, scancel, start, http.StatusBadGateway, "upstream_error", fmt.Sprintf("upstream answer over %d bytes", maxUpstreamBody))
		case resp.StatusCode < 200 || resp.StatusCode > 299:
			p.upstreamError(w, r, &rec, scancel, start, resp, b)
		default:
			idle.Stop()
			p.answer(w, r, &rec, result, start, resp, b)
		}
		return
	}
	p.stream(w, r, &rec, result, start, ustart, resp, idle, uctx)
}

// upstreamFailure maps a failed exchange with the upstream to a status:
// 504 when it stayed silent for the timeout, 502 otherwise.
func (p *llmProxy) upstreamFailure(uctx context.Context, err error) (int, string) {
	if cause := context.Cause(uctx); cause != nil && !errors.Is(cause, context.Canceled) {
		return http.StatusGatewayTimeout, cause.Error()
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // the URL is the proxy's configuration, not the caller's business
	}
	return http.StatusBadGateway, "upstream: " + err.Error()
}

// fail answers the caller with an error of the proxy's own and records it.
func (p *llmProxy) fail(w http.ResponseWriter, r *http.Request, rec *store.LLMRequest, stop context.CancelFunc, start time.Time, status int, typ, msg string) {
	stop()
	writeOpenAIError(w, status, typ, nil, msg)
	rec.Status, rec.Error = status, msg
	p.record(w, r, rec, start)
}

// upstreamError returns the upstream's error status and body: as it is
// when it is OpenAI's {"error": {...}}, else wrapped into that shape.
func (p *llmProxy) upstreamError(w http.ResponseWriter, r *http.Request, rec *store.LLMRequest, stop context.CancelFunc, start time.Time, resp *http.Response, b []byte) {
	stop()
	var e struct {
		Error json.RawMessage `json:"error"`
	}
	msg := strings.TrimSpace(string(b))
	if json.Unmarshal(b, &e) == nil && len(e.Error) > 0 && e.Error[0] == '{' {
		copyHeaders(w.Header(), resp.Header)
		w.Header().Set("Content-Length", strconv.Itoa(len(b)))
		w.WriteHeader(resp.StatusCode)
		w.Write(b)
		var m struct {
			Message string `json:"message"`
		}
		json.Unmarshal(e.Error, &m)
		msg = m.Message
	} else {
		if msg == "" {
			msg = http.StatusText(resp.StatusCode)
		}
		msg = "upstream: " + abbreviate(msg, 1000)
		writeOpenAIError(w, resp.StatusCode, "upstream_error", resp.StatusCode, msg)
	}
	rec.Status, rec.Error = resp.StatusCode, abbreviate(msg, 1000)
	p.record(w, r, rec, start)
}

func abbreviate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 { // not inside a UTF-8 sequence
		n--
	}
	return s[:n] + "…"
}

// answer returns a complete upstream answer with the "genlens" key and
// header, once the samples are scored.
func (p *llmProxy) answer(w http.ResponseWriter, r *http.Request, rec *store.LLMRequest, result <-chan scored, start time.Time, resp *http.Response, b []byte) {
	sc := <-result
	out, ok := withKey(b, p.genlensKey(sc))
	if !ok {
		p.fail(w, r, rec, func() {}, start, http.StatusBadGateway, "upstream_error",
			"upstream: the answer is not a JSON object: "+abbreviate(strings.TrimSpace(string(b)), 200))
		return
	}
	copyHeaders(w.Header(), resp.Header)
	w.Header().Set("Content-Length", strconv.Itoa(len(out)))
	if sc.err == nil {
		w.Header().Set("X-Genlens-Uncertainty", strconv.FormatFloat(sc.uncertainty, 'g', -1, 64))
	}
	w.WriteHeader(resp.StatusCode)
	w.Write(out)
	var a struct {
		Model   string `json:"model"`
		Choices []struct {
			Message struct {
				Content *string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
	}
	json.Unmarshal(b, &a)
	if len(a.Choices) > 0 && a.Choices[0].Message.Content != nil {
		rec.Answer = *a.Choices[0].Message.Content
	}
	if rec.Model == "" {
		rec.Model = a.Model
	}
	rec.Status, rec.Uncertainty, rec.SampleSeconds = resp.StatusCode, sc.uncertainty, sc.seconds
	if sc.err != nil {
		rec.Error = sc.err.Error()
	}
	p.record(w, r, rec, start)
}

// stream passes a server-sent event stream through line by line,
// flushing after every event, and collects the first choice's text; the
// score goes to the store and the metrics only.
func (p *llmProxy) stream(w http.ResponseWriter, r *http.Request, rec *store.LLMRequest, result <-chan scored, start, ustart time.Time, resp *http.Response, idle *time.Timer, uctx context.Context) {
	copyHeaders(w.Header(), resp.Header)
	w.WriteHeader(resp.StatusCode)
	rc := http.NewResponseController(w)
	rc.Flush()
	br := bufio.NewReaderSize(resp.Body, 64<<10)
	var answer strings.Builder
	whole := true // the current line is read from its start
	var streamErr error
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 {
			idle.Reset(p.timeout)
			if _, werr := w.Write(line); werr != nil {
				streamErr = fmt.Errorf("writing to the caller: %w", werr)
				break
			}
			if err == nil && whole {
				collectDelta(&answer, line)
				if t := bytes.TrimRight(line, "\r\n"); len(t) == 0 {
					rc.Flush()
				}
			}
			whole = err == nil
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			if err != io.EOF {
				_, msg := p.upstreamFailure(uctx, err)
				streamErr = errors.New(msg)
			}
			break
		}
	}
	rc.Flush()
	idle.Stop()
	rec.UpstreamSeconds = time.Since(ustart).Seconds()
	sc := <-result
	rec.Answer, rec.Status, rec.Uncertainty, rec.SampleSeconds = answer.String(), resp.StatusCode, sc.uncertainty, sc.seconds
	switch {
	case streamErr != nil:
		rec.Error = "stream: " + streamErr.Error()
	case sc.err != nil:
		rec.Error = sc.err.Error()
	}
	p.record(w, r, rec, start)
}

// collectDelta appends the first choice's content of one "data: {...}"
// line of a chat completion stream to b, up to the stored length.
func collectDelta(b *strings.Builder, line []byte) {
	data, ok := bytes.CutPrefix(bytes.TrimRight(line, "\r\n"), []byte("data:"))
	if !ok || b.Len() >= maxStoredAnswer {
		return
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		return // [DONE]
	}
	var ev struct {
		Choices []struct {
			Index int `json:"index"`
			Delta struct {
				Content *string `json:"content"`
			} `json:"delta"`
		} `json:"choices"`
	}
	if json.Unmarshal(data, &ev) != nil {
		return
	}
	for _, c := range ev.Choices {
		if c.Index == 0 && c.Delta.Content != nil {
			b.WriteString(*c.Delta.Content)
		}
	}
}

// record stores the request and updates the metrics; a store failure is
// logged, never the caller's. The answer is flushed first: the caller
// does not wait for the store.
func (p *llmProxy) record(w http.ResponseWriter, r *http.Request, rec *store.LLMRequest, start time.Time) {
	http.NewResponseController(w).Flush()
	rec.TotalSeconds = time.Since(start).Seconds()
	rec.Answer = abbreviate(rec.Answer, maxStoredAnswer)
	model := p.modelLabel(rec.Model)
	m := p.s.metrics
	m.llmRequests.WithLabelValues(model, strconv.Itoa(rec.Status)).Inc()
	if rec.UpstreamSeconds > 0 {
		m.llmUpstream.WithLabelValues(model).Observe(rec.UpstreamSeconds)
	}
	if !math.IsNaN(rec.Uncertainty) {
		m.llmUncertainty.WithLabelValues(model).Observe(rec.Uncertainty)
	}
	p.recMu.RLock()
	if !p.closed {
		p.records <- *rec
	}
	p.recMu.RUnlock()
	if rec.Error != "" {
		p.s.log.Warn("llm proxy", "model", rec.Model, "status", rec.Status, "err", rec.Error)
	}
}

// modelLabel is the metric label of a model name: the first
// maxModelLabels names seen have their own, later ones share "other".
func (p *llmProxy) modelLabel(name string) string {
	name = abbreviate(name, 100)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.models[name] {
		return name
	}
	if len(p.models) >= maxModelLabels {
		return "other"
	}
	p.models[name] = true
	return name
}
