package llmproxy

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
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/format/strictjson"
	"github.com/genlens/genlens/internal/store/records"
	"github.com/genlens/genlens/llm"
	"github.com/genlens/genlens/llm/chatnli"
	"github.com/genlens/genlens/metric/likelihood"
	"github.com/genlens/genlens/metric/uncertainty"
	"github.com/genlens/genlens/network/nli"
)

// Defaults and bounds of the proxy.
const (
	DefaultSamples = 5
	MaxSamples     = 64
	DefaultScore   = "kernel-entropy"
	// DefaultTimeout is a good llm.Config.Timeout for the upstream's
	// client, whose timeout is the proxy's.
	DefaultTimeout = 2 * time.Minute
	// DefaultMaxBody bounds a request body when Options.MaxBody is 0.
	DefaultMaxBody = 32 << 20
	// maxUpstreamBody bounds an upstream's non-streamed answer.
	maxUpstreamBody = 32 << 20
	// MaxStoredAnswer bounds the answer text kept in a record.
	MaxStoredAnswer = 64 << 10
	// MaxModel bounds the model name of a request, in bytes: it is
	// stored, logged and a metric label.
	MaxModel = 256
	// MaxStoredError bounds the error text kept in a record and logged.
	MaxStoredError = 1000
	// MaxSampleBytes and MaxSampleWords bound the text of a sample that
	// is scored: the scores compare every pair of samples word by word,
	// so their cost grows with k² × words², and an upstream decides how
	// long its answers are. A longer sample is scored on its beginning.
	MaxSampleBytes = 8 << 10
	MaxSampleWords = 1000
	// samplingSlots bounds the samplings in flight, as many as the
	// client's requests (NewClient); samplingWait is how long a request
	// waits for one before it is answered without a score, so that
	// samplings an upstream holds until the timeout delay no other
	// caller's answer by more.
	samplingSlots = 64
	samplingWait  = time.Second
	// maxUpstreamReads bounds the non-streamed upstream answers read at
	// once (each up to maxUpstreamBody).
	maxUpstreamReads = 4
)

// scoreSlots bounds the scorings that run at once: one per CPU.
var scoreSlots = make(chan struct{}, max(1, runtime.GOMAXPROCS(0)))

// cutSample returns the first MaxSampleWords words of s, at most
// MaxSampleBytes bytes of it, cut on a rune boundary.
func cutSample(s string) string {
	if len(s) > MaxSampleBytes {
		n := MaxSampleBytes
		for n > 0 && s[n]&0xC0 == 0x80 {
			n--
		}
		s = s[:n]
	}
	words, inWord := 0, false
	for i, r := range s {
		space := unicode.IsSpace(r)
		if !space && !inWord {
			if words == MaxSampleWords {
				return s[:i]
			}
			words++
		}
		inWord = !space
	}
	return s
}

// Sampler draws the proxy's samples from the upstream: n choices of req,
// asking again for the missing ones when the server returns fewer. An
// *llm.Client is one; tests substitute their own.
type Sampler interface {
	Sample(ctx context.Context, req llm.ChatRequest, n int) ([]llm.Choice, llm.Usage, error)
}

// Recorder keeps the proxied requests; package store's DB is one. The
// proxy calls it from one goroutine, with batches.
type Recorder interface {
	InsertLLMRequests(ctx context.Context, rs []records.LLMRequest) error
}

// Options configure a Proxy.
type Options struct {
	// Client is the upstream: its base URL is the API root the proxy
	// answers for (a request to /v1/chat/completions goes to BaseURL +
	// /chat/completions), its key is the one sent upstream (the caller's
	// Authorization header never is), and its timeout cuts an upstream
	// that does not answer: the whole answer, the sampling, and every
	// gap between two chunks of a stream. Its sampling errors reach the
	// callers: make it with llm.Config.Name ("upstream") so that they
	// carry no address. Required.
	Client *llm.Client
	// Sampler draws the samples; nil means Client.
	Sampler Sampler
	// Samples is k, the samples drawn per request (0: DefaultSamples).
	Samples int
	// Score names the uncertainty score (Scores; "": DefaultScore).
	Score string
	// MaxBody bounds a request body in bytes (0: DefaultMaxBody).
	MaxBody int64
	// Recorder, when not nil, keeps every request once answered.
	Recorder Recorder
	// Observe, when not nil, is called with every request once answered,
	// before it is stored: the caller's metrics.
	Observe func(records.LLMRequest)
	// Logger receives store failures and failed requests; nil discards
	// them.
	Logger *slog.Logger
	// Embedder, when not nil, embeds the samples in process for the
	// scores (see Embedder); Score must then be one that uses them.
	Embedder Embedder
	// Secrets are texts that never leave the proxy: the upstream's key
	// and the service's other secrets. Each is replaced by "[redacted]"
	// in the answers, headers and errors the callers read, in the
	// stored records and in the log.
	Secrets []string
	// Judge is the entailment judge of the SemanticScores (se,
	// se-discrete, numsets, label-prob, semantic-density, luq, ccp),
	// which need one, and of the similarity nli (Similarity); the other
	// scores take none.
	Judge Judge
	// TopLogprobs is the alternatives per token asked of the caller's
	// answer for mte, cocoa-mte and ccp (0: llm.MaxTopLogprobs; 1 to
	// llm.MaxTopLogprobs).
	TopLogprobs int
	// PTruePrompt is the template of ptrue's question (see
	// llm.PTruePrompt, the default when ""); it must hold {answer}.
	PTruePrompt string
	// Similarity is the similarity of texts of the scores that read one
	// (SimilarityScores): "rougel" (the default when "") or "nli", the
	// Judge's entailment probability both ways, averaged, as
	// `genlens entropy --similarity` names them.
	Similarity string
}

// score maps samples to an uncertainty.
type scoreFunc func(ctx context.Context, samples []string) (float64, error)

// Scores lists the uncertainty scores the proxy computes: every score of
// uncertainty's table (uncertainty.Defs) but those that grow with
// confidence (lexical similarity), since the proxy's answer carries an
// uncertainty. Each is computed as `genlens entropy` computes it by
// default: the contiguous-subsequence kernel on word tokens (subsequences
// of lengths 1 and 2, summed) for kernel entropy; RougeL similarity and
// t = 0.3 for the graph scores; RougeL similarity, too, for the
// similarity of the caller's answer with the samples (CoCoA) and of the
// samples with each other (SentenceSAR, SAR), and of an answer with
// itself without one of its tokens (TokenSAR, SAR).
func Scores() []string {
	var names []string
	for _, d := range uncertainty.Defs() {
		if !d.Confidence {
			names = append(names, d.Name)
		}
	}
	slices.Sort(names)
	return names
}

func scoreWith(score uncertainty.Score) scoreFunc {
	// The options are checked once, here, not on every request.
	sc, err := uncertainty.NewScorer(uncertainty.Options{Sequence: uncertainty.DefaultSequence, Scores: []uncertainty.Score{score},
		Similarity: uncertainty.SimilarityRougeL, KLETime: uncertainty.DefaultKLETime})
	return func(ctx context.Context, samples []string) (float64, error) {
		if err != nil {
			return math.NaN(), err
		}
		if err := ctx.Err(); err != nil {
			return math.NaN(), err
		}
		res, err := sc.Evaluate(uncertainty.Prompt{ID: "request", Samples: samples})
		if err != nil {
			return math.NaN(), err
		}
		u := res.Value(score)
		if math.IsNaN(u) {
			return math.NaN(), errors.New(res.Reason)
		}
		return u, nil
	}
}

// Proxy is the OpenAI-compatible uncertainty proxy, an http.Handler of
// POST chat completions; see the package documentation.
type Proxy struct {
	client   *llm.Client
	k        int
	score    string
	def      uncertainty.Def // the score's entry in uncertainty's table
	scoreFn  scoreFunc       // a score of the samples' texts, or nil
	tokenFn  bool            // a score of the samples' logprobs alone
	answerFn bool            // a score of the answer's logprobs
	// withSamples: a score of the answer's logprobs and of the samples
	// (CoCoA, semantic density), scored once the answer comes.
	withSamples bool
	// polyFn: a score of the samples' similarities or of the judge's
	// probabilities of their pairs (SentenceSAR, SAR, LUQ).
	polyFn bool
	// nliSim: the similarity of texts is the judge's (Options.Similarity).
	nliSim bool
	semFn  bool                               // a score of the samples' clusters
	judge  func() (nli.Model, *chatnli.Judge) // a judge for one request's pairs
	ptrue  bool
	// questionFn: a score of the upstream's replies to question, asked
	// about the caller's answer once it comes.
	questionFn bool
	question   llm.Question
	timeout    time.Duration
	sampler    Sampler
	maxBody    int64
	recorder   Recorder
	observe    func(records.LLMRequest)
	log        *slog.Logger
	secrets    []string
	reads      chan struct{} // the non-streamed upstream answers being read

	// ptruePrompt is ptrue's template; topK the alternatives asked for mte.
	ptruePrompt string
	topK        int

	// samplings are the samplings in flight: Sample holds the client's
	// request slots until the upstream answers or the timeout.
	samplings chan struct{}

	// The recorder stores requests in batches (Recorder.InsertLLMRequests):
	// one commit per request would bound a busy proxy by the store's
	// fsyncs. A request is acknowledged before it is stored, so a crash
	// loses the few still queued.
	records chan records.LLMRequest
	recDone chan struct{}
	recMu   sync.RWMutex // closed and the send on records
	closed  bool
}

// recordBatch bounds the requests stored in one transaction.
const recordBatch = 256

func (p *Proxy) runRecorder() {
	defer close(p.recDone)
	for r := range p.records {
		batch := []records.LLMRequest{r}
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
		if err := p.recorder.InsertLLMRequests(ctx, batch); err != nil {
			p.log.Error("llm proxy: storing requests", "n", len(batch), "err", err)
		}
		cancel()
	}
}

// Close stores the queued requests and stops the recorder; requests
// answered later are not stored.
func (p *Proxy) Close(ctx context.Context) error {
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

// New checks o and returns a Proxy, whose recorder runs until Close.
func New(o Options) (*Proxy, error) {
	if o.Client == nil {
		return nil, errors.New("llmproxy: no upstream client")
	}
	o.EnsureDefaults()
	if err := o.Validate(); err != nil {
		return nil, fmt.Errorf("llmproxy: %w", err)
	}
	p := &Proxy{client: o.Client, k: o.Samples, score: o.Score, timeout: o.Client.Timeout(), sampler: o.Sampler,
		maxBody: o.MaxBody, recorder: o.Recorder, observe: o.Observe, log: o.Logger, secrets: append(slices.Clone(o.Secrets), o.Client.Secrets()...),
		records: make(chan records.LLMRequest, 4*recordBatch), recDone: make(chan struct{}),
		reads: make(chan struct{}, maxUpstreamReads), samplings: make(chan struct{}, samplingSlots)}
	p.def, _ = uncertainty.Lookup(p.score)
	p.nliSim = o.Similarity == string(uncertainty.SimilarityNLI)
	n := p.def.Needs
	p.tokenFn = n == uncertainty.NeedsSampleLogprobs
	p.answerFn = n&uncertainty.NeedsAnswerLogprobs != 0
	p.semFn = n&uncertainty.NeedsJudge != 0
	p.withSamples = p.answerFn && n&sampleNeeds != 0
	p.polyFn = !p.answerFn && n&(uncertainty.NeedsSimilarity|uncertainty.NeedsEntailmentProbs|uncertainty.NeedsSampleTokenSimilarity) != 0
	p.ptrue = n&uncertainty.NeedsModel != 0
	p.question, p.questionFn = llm.QuestionOf(p.score)
	p.questionFn = p.questionFn && n&uncertainty.NeedsQuestion != 0
	if p.def.Sim != "" {
		p.scoreFn = scoreWith(p.def.Sim)
	}
	if err := p.configure(o); err != nil {
		return nil, err
	}
	if o.Embedder != nil {
		if p.scoreFn = embeddingScore(p.score, o.Embedder); p.scoreFn == nil {
			return nil, fmt.Errorf("llmproxy: score %q does not use embeddings: drop the embedder or choose one of %s", p.score, strings.Join(EmbeddingScores(), ", "))
		}
	}
	if p.sampler == nil {
		p.sampler = o.Client
	}
	if p.maxBody <= 0 {
		p.maxBody = DefaultMaxBody
	}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	if p.recorder == nil {
		close(p.recDone)
		p.closed = true
		return p, nil
	}
	go p.runRecorder()
	return p, nil
}

// Score returns the name of the uncertainty score the proxy computes.
func (p *Proxy) Score() string { return p.score }

// Samples returns k, the samples drawn per request.
func (p *Proxy) Samples() int { return p.k }

// WriteError writes an error in the shape of the OpenAI API,
// {"error": {"message", "type", "param", "code"}}: what client libraries
// read, also for the server's own refusals (a wrong token) in front of
// the proxy.
func WriteError(w http.ResponseWriter, status int, typ string, code any, msg string) {
	b := errorBody(typ, code, msg)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	w.Write(b)
}

func errorBody(typ string, code any, msg string) []byte {
	b, _ := json.Marshal(llm.ErrorResponse{Error: &llm.ErrorDetail{Message: msg, Type: typ, Code: code}})
	return append(b, '\n')
}

// chatRequest is what the proxy reads of the caller's request; the
// request itself goes upstream byte for byte.
type chatRequest struct {
	Model     string          `json:"model"`
	Logprobs  json.RawMessage `json:"logprobs"`
	Messages  json.RawMessage `json:"messages"`
	Stream    bool            `json:"stream"`
	MaxTokens *int            `json:"max_tokens"`
	// Carried to the samples as they are.
	MaxCompletionTokens json.RawMessage `json:"max_completion_tokens"`
	Stop                json.RawMessage `json:"stop"`
}

// tokenScore is the score of the samples' token log-probabilities; an
// upstream that sent none (it ignores "logprobs") leaves it unavailable,
// never 0.
func (p *Proxy) tokenScore(choices []llm.Choice) (float64, error) {
	toks := make([][]likelihood.Token, len(choices))
	for i, c := range choices {
		if c.Tokens == nil {
			return math.NaN(), fmt.Errorf("scoring: the upstream sent no logprobs with its samples, and %s needs them", p.score)
		}
		toks[i] = make([]likelihood.Token, len(c.Tokens))
		for j, t := range c.Tokens {
			toks[i][j].Logprob = t.Logprob
		}
	}
	u, err := p.def.Value(uncertainty.Input{Logprobs: toks})
	if err != nil {
		return math.NaN(), fmt.Errorf("scoring: %w", err)
	}
	return u, nil
}

// sampleRequest is the request of the k samples: the caller's messages
// (each sent as it came, content parts included), model and length
// limits, at temperature 1.
func (p *Proxy) sampleRequest(cr *chatRequest) (llm.ChatRequest, error) {
	var msgs []llm.Message
	if err := json.Unmarshal(cr.Messages, &msgs); err != nil {
		return llm.ChatRequest{}, fmt.Errorf("messages: %v", err)
	}
	if len(msgs) == 0 {
		return llm.ChatRequest{}, errors.New("no messages")
	}
	one := 1.0
	req := llm.ChatRequest{Model: cr.Model, N: p.k, Temperature: &one, Messages: msgs, Logprobs: p.def.Needs&uncertainty.NeedsSampleLogprobs != 0}
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
	samples     []string     // their texts, for p(True) and the scores of the answer with them
	choices     []llm.Choice // and their tokens
}

// draw samples and scores in the background; the channel receives one
// outcome.
func (p *Proxy) draw(ctx context.Context, req llm.ChatRequest, reqErr error, stream bool) <-chan scored {
	out := make(chan scored, 1)
	if reqErr != nil {
		out <- scored{uncertainty: math.NaN(), err: reqErr}
		return out
	}
	if p.answerFn && (!p.withSamples || stream) || p.questionFn {
		// The answer is scored once it comes; a stream's answer has no
		// logprobs (see stream), so its samples would go unread.
		out <- scored{}
		return out
	}
	go func() {
		start := time.Now()
		var kept scored
		u, err := p.sampleAndScore(ctx, req, &kept)
		out <- scored{uncertainty: u, err: err, seconds: time.Since(start).Seconds(), samples: kept.samples, choices: kept.choices}
	}()
	return out
}

// sampleAndScore draws the samples and scores them; for p(True) and the
// scores of the answer with the samples, which score them once the
// answer comes, it keeps them in *keep instead.
func (p *Proxy) sampleAndScore(ctx context.Context, req llm.ChatRequest, keep *scored) (float64, error) {
	wait := time.NewTimer(samplingWait)
	select {
	case p.samplings <- struct{}{}:
		wait.Stop()
	case <-wait.C:
		return math.NaN(), fmt.Errorf("sampling: all %d sampling slots busy for %s (the upstream is slow to answer them)", samplingSlots, samplingWait)
	case <-ctx.Done():
		wait.Stop()
		if ctx.Err() == context.DeadlineExceeded {
			return math.NaN(), p.cutErr()
		}
		return math.NaN(), fmt.Errorf("sampling: %w", ctx.Err())
	}
	choices, _, err := p.sampler.Sample(ctx, req, p.k)
	<-p.samplings
	if err != nil && ctx.Err() == context.DeadlineExceeded {
		return math.NaN(), p.cutErr()
	}
	if err != nil {
		// The caller sees this message: a client made with
		// llm.Config.Name tells no address (see Options.Client).
		return math.NaN(), fmt.Errorf("sampling: %w", err)
	}
	if len(choices) != p.k {
		return math.NaN(), fmt.Errorf("sampling: %d samples, want %d", len(choices), p.k)
	}
	if p.tokenFn {
		return p.tokenScore(choices)
	}
	texts := make([]string, len(choices))
	for i, c := range choices {
		texts[i] = cutSample(c.Text)
	}
	if p.ptrue || p.withSamples {
		keep.samples, keep.choices = texts, choices
		return math.NaN(), nil
	}
	select {
	case scoreSlots <- struct{}{}:
	case <-ctx.Done():
		return math.NaN(), fmt.Errorf("scoring: no free scoring slot within the proxy's timeout (%s)", p.timeout)
	}
	defer func() { <-scoreSlots }()
	var u float64
	switch {
	case p.semFn:
		u, err = p.semanticScore(ctx, req, choices, texts)
	case p.polyFn:
		u, err = p.samplesScore(ctx, req, choices, texts)
	default:
		u, err = p.scoreFn(ctx, texts)
	}
	if err != nil && ctx.Err() == context.DeadlineExceeded {
		return math.NaN(), p.cutErr()
	}
	if err != nil {
		return math.NaN(), fmt.Errorf("scoring: %w", err)
	}
	return u, nil
}

// outcome waits for the samples' score until ctx, the proxy's timeout
// from the request's start, ends: an answer is never held longer for its
// score, which is then an error saying so.
func (p *Proxy) outcome(ctx context.Context, result <-chan scored) scored {
	select {
	case sc := <-result:
		return sc
	case <-ctx.Done():
	}
	select {
	case sc := <-result: // both ready: the result wins
		return sc
	default:
	}
	return scored{uncertainty: math.NaN(), err: p.cutErr()}
}

// cutErr is the one message for samples or scores the proxy's timeout
// cut: whether the sampler or the waiting answer notices the deadline
// first is a race, and the caller must read the same words either way.
func (p *Proxy) cutErr() error {
	return fmt.Errorf("sampling and scoring cut at the proxy's timeout (%s)", p.timeout)
}

// genlensKey is the value of the added "genlens" key.
func (p *Proxy) genlensKey(sc scored) []byte {
	var v any
	if sc.err != nil {
		v = struct {
			Error string `json:"error"`
		}{llm.Redact(sc.err.Error(), p.secrets)}
	} else {
		v = struct {
			Uncertainty float64 `json:"uncertainty"`
			Score       string  `json:"score"`
			Samples     int     `json:"samples"`
		}{sc.uncertainty, p.score, p.samplesDrawn()}
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
// answer; nor is Location (the caller would follow it to wherever the
// upstream points), the upstream's CORS headers (the service decides
// who may read its answers), or its X-Genlens-* headers (only the proxy
// speaks for genlens).
var skipHeaders = map[string]bool{"Connection": true, "Keep-Alive": true, "Transfer-Encoding": true, "Upgrade": true,
	"Proxy-Authenticate": true, "Proxy-Connection": true, "Te": true, "Trailer": true, "Content-Length": true, "Set-Cookie": true,
	"Location": true}

func (p *Proxy) copyHeaders(dst, src http.Header) {
	for k, vs := range src {
		if skipHeaders[k] || strings.HasPrefix(k, "X-Genlens-") || strings.HasPrefix(k, "Access-Control-") {
			continue
		}
		vs = slices.Clone(vs)
		for i := range vs {
			vs[i] = llm.Redact(vs[i], p.secrets)
		}
		dst[k] = vs
	}
}

// passable reports whether the proxy passes an upstream status on: a
// success or an error; a redirect, a 304 (the caller sent no condition)
// or a status outside the HTTP range is the upstream's fault, a 502.
func passable(status int) bool {
	return (status >= 200 && status <= 299) || (status >= 400 && status <= 599)
}

// ServeHTTP serves a chat completions request.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rec := records.LLMRequest{Time: start.UTC(), Score: p.score, Samples: p.samplesDrawn(), Uncertainty: math.NaN()}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, p.maxBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			WriteError(w, http.StatusRequestEntityTooLarge, "invalid_request_error", nil, fmt.Sprintf("request body over %d bytes", mbe.Limit))
			return
		}
		WriteError(w, http.StatusBadRequest, "invalid_request_error", nil, "reading the request body: "+err.Error())
		return
	}
	var cr chatRequest
	if err := json.Unmarshal(body, &cr); err != nil {
		WriteError(w, http.StatusBadRequest, "invalid_request_error", nil, strictjson.Error(err).Error())
		return
	}
	if len(cr.Model) > MaxModel {
		WriteError(w, http.StatusBadRequest, "invalid_request_error", nil, fmt.Sprintf("model: %d bytes, over %d", len(cr.Model), MaxModel))
		return
	}
	rec.Model, rec.Stream, rec.MessagesHash = cr.Model, cr.Stream, messagesHash(cr.Messages)
	sreq, reqErr := p.sampleRequest(&cr)
	upBody, blank := body, false
	if p.answerFn && !cr.Stream {
		upBody, blank = p.wantsAnswerLogprobs(body, &cr)
	}

	// A long answer or stream must not be cut by the server's write
	// timeout; the proxy's own timeout bounds the upstream instead.
	rc := http.NewResponseController(w)
	if cr.Stream {
		rc.SetWriteDeadline(time.Time{}) // stream sets one per write
	} else {
		rc.SetWriteDeadline(time.Now().Add(2*p.timeout + time.Minute))
	}

	sctx, scancel := context.WithTimeout(r.Context(), p.timeout)
	defer scancel()
	result := p.draw(sctx, sreq, reqErr, cr.Stream)
	if p.answerFn && cr.Stream {
		rec.Samples = 0
	}

	// The upstream call: cut when it stays silent for the timeout (for
	// a stream, between two chunks; otherwise for the whole answer).
	uctx, ucancel := context.WithCancelCause(r.Context())
	defer ucancel(nil)
	errSilent := fmt.Errorf("upstream silent for %s, the proxy's timeout", p.timeout)
	idle := time.AfterFunc(p.timeout, func() { ucancel(errSilent) })
	defer idle.Stop()
	ustart := time.Now()
	resp, err := p.client.Forward(uctx, "/chat/completions", upBody, r.Header.Get("Accept"))
	if err != nil {
		status, msg := p.upstreamFailure(uctx, err)
		p.fail(w, r, &rec, scancel, start, status, "upstream_error", msg)
		return
	}
	defer resp.Body.Close()
	if !passable(resp.StatusCode) {
		rec.UpstreamSeconds = time.Since(ustart).Seconds()
		p.fail(w, r, &rec, scancel, start, http.StatusBadGateway, "upstream_error", fmt.Sprintf("upstream: status %d", resp.StatusCode))
		return
	}

	if resp.StatusCode < 200 || resp.StatusCode > 299 || !cr.Stream {
		// The slot is held while the answer is read, not while it
		// waits for its score: that wait would queue every other read.
		select {
		case p.reads <- struct{}{}:
		case <-uctx.Done():
			status, msg := p.upstreamFailure(uctx, uctx.Err())
			p.fail(w, r, &rec, scancel, start, status, "upstream_error", msg)
			return
		}
		b, err := io.ReadAll(io.LimitReader(resp.Body, maxUpstreamBody+1))
		<-p.reads
		b = llm.RedactBytes(b, p.secrets)
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
			b, sc := p.scoreAnswer(sctx, sreq, p.outcome(sctx, result), b, blank)
			p.answer(w, r, &rec, sc, start, resp, b)
		}
		return
	}
	p.stream(w, r, &rec, sctx, sreq, result, start, ustart, resp, idle, uctx)
}

// upstreamFailure maps a failed exchange with the upstream to a status:
// 504 when it stayed silent for the timeout, 502 otherwise.
func (p *Proxy) upstreamFailure(uctx context.Context, err error) (int, string) {
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
func (p *Proxy) fail(w http.ResponseWriter, r *http.Request, rec *records.LLMRequest, stop context.CancelFunc, start time.Time, status int, typ, msg string) {
	stop()
	msg = llm.Redact(msg, p.secrets)
	WriteError(w, status, typ, nil, msg)
	rec.Status, rec.Error = status, msg
	p.record(w, r, rec, start)
}

// upstreamError returns the upstream's error status and body: as it is
// when it is OpenAI's {"error": {...}}, else wrapped into that shape.
func (p *Proxy) upstreamError(w http.ResponseWriter, r *http.Request, rec *records.LLMRequest, stop context.CancelFunc, start time.Time, resp *http.Response, b []byte) {
	stop()
	var e llm.ErrorResponse
	msg := strings.TrimSpace(string(b))
	// A field of another type (a numeric param) leaves the rest read.
	var ute *json.UnmarshalTypeError
	if err := json.Unmarshal(b, &e); (err == nil || errors.As(err, &ute)) && e.Error != nil {
		p.copyHeaders(w.Header(), resp.Header)
		w.Header().Set("Content-Length", strconv.Itoa(len(b)))
		w.WriteHeader(resp.StatusCode)
		w.Write(b)
		msg = e.Error.Message
	} else {
		if msg == "" {
			msg = http.StatusText(resp.StatusCode)
		}
		msg = "upstream: " + fault.Printable(msg, 1000)
		WriteError(w, resp.StatusCode, "upstream_error", resp.StatusCode, msg)
	}
	rec.Status, rec.Error = resp.StatusCode, fault.Printable(msg, 1000)
	p.record(w, r, rec, start)
}

// clip cuts a stored answer at n bytes, on a rune boundary. An answer is
// data, kept with its lines; messages go through fault.Printable instead.
func clip(s string, n int) string {
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
func (p *Proxy) answer(w http.ResponseWriter, r *http.Request, rec *records.LLMRequest, sc scored, start time.Time, resp *http.Response, b []byte) {
	out, ok := withKey(b, p.genlensKey(sc))
	if !ok {
		p.fail(w, r, rec, func() {}, start, http.StatusBadGateway, "upstream_error",
			"upstream: the answer is not a JSON object: "+fault.Printable(strings.TrimSpace(string(b)), 200))
		return
	}
	p.copyHeaders(w.Header(), resp.Header)
	w.Header().Set("Content-Length", strconv.Itoa(len(out)))
	if sc.err == nil {
		w.Header().Set("X-Genlens-Uncertainty", strconv.FormatFloat(sc.uncertainty, 'g', -1, 64))
	}
	w.WriteHeader(resp.StatusCode)
	w.Write(out)
	var a llm.ChatCompletion
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
func (p *Proxy) stream(w http.ResponseWriter, r *http.Request, rec *records.LLMRequest, sctx context.Context, sreq llm.ChatRequest, result <-chan scored, start, ustart time.Time, resp *http.Response, idle *time.Timer, uctx context.Context) {
	p.copyHeaders(w.Header(), resp.Header)
	// Each write must reach the caller within the timeout: a caller that
	// stops reading would otherwise hold the handler, and the upstream
	// stream, for as long as it keeps its socket open.
	rc := http.NewResponseController(w)
	rc.SetWriteDeadline(time.Now().Add(p.timeout))
	w.WriteHeader(resp.StatusCode)
	rc.Flush()
	br := bufio.NewReaderSize(resp.Body, 64<<10)
	var answer strings.Builder
	whole := true // the current line is read from its start
	var streamErr error
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 {
			idle.Reset(p.timeout)
			line = llm.RedactBytes(line, p.secrets)
			rc.SetWriteDeadline(time.Now().Add(p.timeout))
			if _, werr := w.Write(line); werr != nil {
				streamErr = fmt.Errorf("writing to the caller: %w", werr)
				break
			}
			if err == nil && whole {
				collectDelta(&answer, line)
				if t := bytes.TrimRight(line, "\r\n"); len(t) == 0 {
					if ferr := rc.Flush(); ferr != nil {
						streamErr = fmt.Errorf("writing to the caller: %w", ferr)
						break
					}
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
	sc := p.outcome(sctx, result)
	switch {
	case p.ptrue:
		sc = p.askPTrue(sctx, sreq, sc, answer.String())
	case p.questionFn:
		sc = p.askQuestion(sctx, sreq, sc, answer.String())
	case p.answerFn:
		sc = scored{uncertainty: math.NaN(), err: fmt.Errorf("scoring: %s reads the answer's logprobs, and a stream passes through as the caller asked it", p.score)}
	}
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
	if !ok || b.Len() >= MaxStoredAnswer {
		return
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		return // [DONE]
	}
	var ev llm.ChatChunk
	if json.Unmarshal(data, &ev) != nil {
		return
	}
	for _, c := range ev.Choices {
		if c.Index == 0 && c.Delta.Content != nil {
			b.WriteString(*c.Delta.Content)
		}
	}
}

// record hands the request to the recorder, then to Observe; a store failure
// is logged, never the caller's. The answer is flushed first: the caller
// does not wait for the store.
func (p *Proxy) record(w http.ResponseWriter, r *http.Request, rec *records.LLMRequest, start time.Time) {
	http.NewResponseController(w).Flush()
	rec.TotalSeconds = time.Since(start).Seconds()
	rec.Answer = clip(llm.Redact(rec.Answer, p.secrets), MaxStoredAnswer)
	rec.Error = clip(llm.Redact(rec.Error, p.secrets), MaxStoredError)
	rec.Model = clip(rec.Model, MaxModel) // the upstream's, when the caller named none
	p.recMu.RLock()
	if !p.closed {
		p.records <- *rec
	}
	p.recMu.RUnlock()
	if p.observe != nil {
		p.observe(*rec)
	}
	if rec.Error != "" {
		p.log.Warn("llm proxy", "model", rec.Model, "status", rec.Status, "err", rec.Error)
	}
}

// maxSampleResponse bounds an answer of k samples: 64 samples of 128 KiB,
// far more than is scored of them (MaxSampleBytes each).
const maxSampleResponse = 8 << 20

// NewClient returns the one client of a proxy's upstream: its timeout is
// the proxy's (the answer, the sampling as a whole, a gap in a stream),
// and retries of the samples stay within it; 64 sample requests in
// flight serve 64 concurrent callers without queueing (passed-through
// requests are not counted).
func NewClient(upstream, apiKey string, timeout time.Duration) (*llm.Client, error) {
	return llm.New(llm.Config{BaseURL: upstream, APIKey: apiKey, Name: "upstream", Timeout: timeout, MaxRetries: 2, Concurrency: samplingSlots,
		MaxResponseBytes: maxSampleResponse})
}
