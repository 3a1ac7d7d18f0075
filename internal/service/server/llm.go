package server

// The LLM proxy (package llmproxy) as the server mounts it: its route
// with the server's token in OpenAI's error shape, its bodies among the
// bodies in flight, its requests in the store and its metrics here.

import (
	"math"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/service/llmproxy"
	"github.com/genlens/genlens/internal/store/records"
	"github.com/genlens/genlens/llm"
	"github.com/genlens/genlens/network/bert"
)

// LLMOptions configure the OpenAI-compatible uncertainty proxy at
// /v1/chat/completions; no Upstream, Client or Sampler leaves it off.
type LLMOptions struct {
	// Upstream, APIKey and Timeout make Client when it is nil
	// (llmproxy.NewClient): the upstream's API root, its key, the
	// proxy's timeout.
	Upstream string
	APIKey   string
	Timeout  time.Duration
	// Client is the upstream (see llmproxy.Options.Client): its base URL,
	// key and timeout.
	Client *llm.Client
	// Sampler draws the samples; nil means Client.
	Sampler llmproxy.Sampler
	// Samples is k (0: llmproxy.DefaultSamples).
	Samples int
	// Score names the uncertainty score (llmproxy.Scores; "":
	// llmproxy.DefaultScore).
	Score string
	// Embedder names a BERT sentence embedder (bert.Names) that embeds
	// the samples in process for the score (llmproxy.Embedder), from the
	// model directory Weights; "" scores the words.
	Embedder string
	Weights  string
	// Prefix is what Embedder puts before every sample: query (""),
	// passage or none (bert.Prefixes).
	Prefix string
	// The entailment judge of llmproxy.SemanticScores, and of the
	// similarity nli (llmproxy.Judge): an NLI model (llmproxy.NLIModels) from the model
	// directory NLIWeights, or a chat model NLIModel at the API root
	// NLIBaseURL, sent NLIAPIKey.
	NLI, NLIWeights                 string
	NLIBaseURL, NLIModel, NLIAPIKey string
	// TopLogprobs is the alternatives per token mte, cocoa-mte and ccp ask of the answer
	// (0: llmproxy.DefaultTopLogprobs).
	TopLogprobs int
	// PTruePrompt is a file holding p(True)'s template ("": the one of
	// Kadavath et al.).
	PTruePrompt string
	// Similarity is the similarity of texts of the scores that read one
	// (llmproxy.Options.Similarity): rougel ("") or nli, the judge's.
	Similarity string
}

// maxModelLabels bounds the distinct model names in metric labels;
// callers choose the name, and each would be a new series.
const maxModelLabels = 64

func (s *Server) newLLMProxy(o LLMOptions) (*llmproxy.Proxy, error) {
	labels := &modelLabels{seen: map[string]bool{}}
	m := s.metrics
	var emb llmproxy.Embedder
	if o.Embedder != "" {
		spec, _ := bert.Lookup(o.Embedder)
		prefix, _ := spec.PrefixFor(o.Prefix)
		e, err := bert.OpenEmbedder(o.Embedder, o.Weights, prefix)
		if err != nil {
			return nil, fault.Fieldf("llm_weights", "{llm_weights} %s: %v", o.Weights, err)
		}
		emb = e
	}
	var ptrue string
	if o.PTruePrompt != "" {
		var err error
		if ptrue, err = llmproxy.ReadPTruePrompt(o.PTruePrompt); err != nil {
			return nil, fault.Fieldf("llm_ptrue_prompt", "{llm_ptrue_prompt} %v", err)
		}
	}
	po := o.proxyOptions(ptrue)
	po.Client, po.Sampler, po.Embedder = o.Client, o.Sampler, emb
	po.MaxBody, po.Recorder, po.Logger = s.maxBody, s.store, s.log
	po.Secrets = append(slices.Clone(s.opts.Secrets), o.APIKey, o.NLIAPIKey)
	po.Observe = func(rec records.LLMRequest) {
		model := labels.of(rec.Model)
		m.llmRequests.WithLabelValues(model, strconv.Itoa(rec.Status)).Inc()
		if rec.UpstreamSeconds > 0 {
			m.llmUpstream.WithLabelValues(model).Observe(rec.UpstreamSeconds)
		}
		if !math.IsNaN(rec.Uncertainty) {
			m.llmUncertainty.WithLabelValues(model).Observe(rec.Uncertainty)
		}
	}
	p, err := llmproxy.New(po)
	if err != nil && o.NLI != "" {
		return nil, fault.Fieldf("llm_nli_weights", "{llm_nli} %s from {llm_nli_weights} %s: %v", o.NLI, o.NLIWeights, err)
	}
	return p, err
}

// routeLLM mounts the proxy; its bodies count among the bodies in
// flight, as the API's do, for what they cost once read (a stream lasts
// long after its body is read).
func (s *Server) routeLLM(mux *http.ServeMux) {
	mux.Handle("POST /v1/chat/completions", s.openAIAuth(s.limitBodiesRead(s.llm)))
}

// openAIAuth is auth with OpenAI's error shape: client libraries send
// the genlens token as their API key.
func (s *Server) openAIAuth(next http.Handler) http.Handler {
	if s.token == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch status, wait := s.authorize(r); status {
		case http.StatusOK:
			next.ServeHTTP(w, r)
		case http.StatusTooManyRequests:
			w.Header().Set("Retry-After", retryAfter(wait))
			llmproxy.WriteError(w, status, "requests", "rate_limit_exceeded",
				"too many wrong API keys from this address; retry after "+retryAfter(wait)+" s")
		default:
			w.Header().Set("WWW-Authenticate", `Bearer realm="genlens"`)
			llmproxy.WriteError(w, http.StatusUnauthorized, "invalid_request_error", "invalid_api_key",
				"missing or wrong bearer token: send the genlens server's token as the API key")
		}
	})
}

// modelLabels gives the first maxModelLabels model names seen their own
// metric label; later ones share "other".
type modelLabels struct {
	mu   sync.Mutex
	seen map[string]bool
}

func (l *modelLabels) of(name string) string {
	name = fault.Printable(name, 100)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.seen[name] {
		return name
	}
	if len(l.seen) >= maxModelLabels {
		return "other"
	}
	l.seen[name] = true
	return name
}
