package server

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/service/llmproxy"
	"github.com/genlens/genlens/llm"
	"github.com/genlens/genlens/network/bert"
)

// MaxOptionBytes bounds the byte sizes of Options (1 TiB): far above real
// use, and a size given in MiB below it cannot overflow an int64 of bytes.
const MaxOptionBytes = 1 << 40

// EnsureDefaults sets each zero field of o that has a default (see the
// fields' documentation) to it; a transport calls it, then Validate.
func (o *Options) EnsureDefaults() {
	if o.MaxBody == 0 {
		o.MaxBody = DefaultMaxBody
	}
	if o.BodyWait == 0 {
		o.BodyWait = DefaultBodyWait
	}
	if o.MinFreeDisk == 0 {
		o.MinFreeDisk = DefaultMinFreeDisk
	}
	o.Jobs.ensureDefaults()
	if o.LLM.Upstream != "" {
		o.LLM.EnsureDefaults()
	}
}

// DefaultMaxQueued is the default of JobOptions.MaxQueued.
const DefaultMaxQueued = 1000

// maxQueued bounds JobOptions.MaxQueued.
const maxQueued = 1_000_000

// Validate checks the bounds of o, whose zero fields mean their defaults
// only after EnsureDefaults (but MaxBodiesInFlight, whose zero means twice
// MaxBody): a bad field is a *fault.FieldError naming it in braces
// ({max_body}, {workers}, {llm_samples}: the field's name in snake case,
// prefixed llm_ in LLM), sizes said in MiB.
func (o *Options) Validate() error {
	j := o.Jobs
	for _, s := range []struct {
		field string
		n     int64
	}{{"max_body", o.MaxBody}, {"min_free_disk", o.MinFreeDisk}, {"model_cache", j.ModelCacheBytes}} {
		if s.n < 1 || s.n > MaxOptionBytes {
			return fault.Fieldf(s.field, "{%s} %s: want 1 byte to %s", s.field, mib(s.n), mib(MaxOptionBytes))
		}
	}
	switch {
	case o.MaxBodiesInFlight != 0 && (o.MaxBodiesInFlight < o.MaxBody || o.MaxBodiesInFlight > MaxOptionBytes):
		return fault.Fieldf("max_bodies", "{max_bodies} %s: want 0 (twice {max_body}) or [{max_body} %s, %s]: one body of the largest size must fit",
			mib(o.MaxBodiesInFlight), mib(o.MaxBody), mib(MaxOptionBytes))
	case o.BodyWait <= 0:
		return fault.Fieldf("body_wait", "{body_wait} %v: want a positive duration", o.BodyWait)
	case j.Workers < 1:
		return fault.Fieldf("workers", "{workers} %d: want at least 1", j.Workers)
	case j.MaxQueued < 1 || j.MaxQueued > maxQueued:
		return fault.Fieldf("max_queued", "{max_queued} %d: want 1 to %d", j.MaxQueued, maxQueued)
	case j.MaxRuntime < 0:
		return fault.Fieldf("max_runtime", "{max_runtime} %v: want 0 (no bound) or a positive duration", j.MaxRuntime)
	case j.RetainJobs < 0:
		return fault.Fieldf("retain_jobs", "{retain_jobs} %v: want 0 (keep forever) or a positive duration", j.RetainJobs)
	case j.RetainUploads < 0:
		return fault.Fieldf("retain_uploads", "{retain_uploads} %v: want 0 (keep forever) or a positive duration", j.RetainUploads)
	}
	if o.LLM.Upstream != "" {
		return o.LLM.Validate()
	}
	return nil
}

// mib says a size in MiB when it is a whole number of them.
func mib(n int64) string {
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// EnsureDefaults sets the zero Samples, Score and Timeout of o to their
// defaults.
func (o *LLMOptions) EnsureDefaults() {
	if o.Samples == 0 {
		o.Samples = llmproxy.DefaultSamples
	}
	if o.Score == "" {
		o.Score = llmproxy.DefaultScore
	}
	if o.Timeout == 0 {
		o.Timeout = llmproxy.DefaultTimeout
	}
}

// Validate checks the proxy's options, with their defaults in place: a
// bad field is a *fault.FieldError ({llm_upstream}, {llm_samples},
// {llm_score}, {llm_timeout}, {llm_nli}, {llm_top_logprobs}, ...).
func (o *LLMOptions) Validate() error {
	u, err := url.Parse(o.Upstream)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return fault.Fieldf("llm_upstream", "{llm_upstream} %q: want an http:// or https:// URL", o.Upstream)
	case o.Samples < 2 || o.Samples > llmproxy.MaxSamples:
		return fault.Fieldf("llm_samples", "{llm_samples} %d: want 2 to %d (an uncertainty needs two samples)", o.Samples, llmproxy.MaxSamples)
	case !slices.Contains(llmproxy.Scores(), o.Score):
		return fault.Fieldf("llm_score", "{llm_score} %q: want %s", o.Score, strings.Join(llmproxy.Scores(), ", "))
	case o.Timeout <= 0:
		return fault.Fieldf("llm_timeout", "{llm_timeout} %v: want a positive duration", o.Timeout)
	}
	if err := o.validateScores(); err != nil {
		return err
	}
	switch {
	case o.Embedder == "" && o.Weights != "":
		return fault.Fieldf("llm_weights", "{llm_weights} %s: give the embedder with {llm_embedder}", o.Weights)
	case o.Embedder == "":
		return nil
	case !slices.Contains(bert.Names(), o.Embedder):
		return fault.Fieldf("llm_embedder", "{llm_embedder} %q: want one of %s", o.Embedder, strings.Join(bert.Names(), ", "))
	case o.Weights == "":
		return fault.Fieldf("llm_weights", "{llm_embedder} %s needs {llm_weights} DIR, the model's directory", o.Embedder)
	case !slices.Contains(llmproxy.EmbeddingScores(), o.Score):
		return fault.Fieldf("llm_score", "{llm_score} %q does not use embeddings: with {llm_embedder}, want %s", o.Score, strings.Join(llmproxy.EmbeddingScores(), ", "))
	}
	return nil
}

// validateScores checks what the scores beyond the samples' words need:
// the entailment judge of the semantic scores, mte's alternatives,
// p(True)'s template.
func (o *LLMOptions) validateScores() error {
	semantic := slices.Contains(llmproxy.SemanticScores(), o.Score)
	judge := "{llm_nli} NAME with {llm_nli_weights} DIR, or {llm_nli_base_url} URL with {llm_nli_model} NAME"
	switch {
	case o.NLI != "" && o.NLIBaseURL != "":
		return fault.Fieldf("llm_nli", "give {llm_nli} or {llm_nli_base_url}, not both")
	case (o.NLI != "" || o.NLIBaseURL != "") && !semantic:
		return fault.Fieldf("llm_score", "{llm_score} %q takes no entailment judge: the judge applies to %s", o.Score, strings.Join(llmproxy.SemanticScores(), ", "))
	case semantic && o.NLI == "" && o.NLIBaseURL == "":
		return fault.Fieldf("llm_score", "{llm_score} %s clusters the samples by entailment: give %s", o.Score, judge)
	case o.NLI != "" && !slices.Contains(llmproxy.NLIModels(), o.NLI):
		return fault.Fieldf("llm_nli", "{llm_nli} %q: want one of %s", o.NLI, strings.Join(llmproxy.NLIModels(), ", "))
	case o.NLI != "" && o.NLIWeights == "":
		return fault.Fieldf("llm_nli_weights", "{llm_nli} %s needs {llm_nli_weights} DIR, the model's directory", o.NLI)
	case o.NLI == "" && o.NLIWeights != "":
		return fault.Fieldf("llm_nli_weights", "{llm_nli_weights} needs {llm_nli} NAME")
	case o.NLIBaseURL == "" && (o.NLIModel != "" || o.NLIAPIKey != ""):
		return fault.Fieldf("llm_nli_model", "{llm_nli_model} and its key need {llm_nli_base_url} URL")
	case o.NLIBaseURL != "" && o.NLIModel == "":
		return fault.Fieldf("llm_nli_model", "{llm_nli_base_url} needs {llm_nli_model} NAME")
	case len(o.NLIModel) > llmproxy.MaxModel:
		return fault.Fieldf("llm_nli_model", "{llm_nli_model}: %d bytes, at most %d", len(o.NLIModel), llmproxy.MaxModel)
	case o.TopLogprobs < 0 || o.TopLogprobs > llm.MaxTopLogprobs:
		return fault.Fieldf("llm_top_logprobs", "{llm_top_logprobs} %d: at most %d (0: %d)", o.TopLogprobs, llm.MaxTopLogprobs, llm.MaxTopLogprobs)
	case o.TopLogprobs != 0 && o.Score != "mte":
		return fault.Fieldf("llm_top_logprobs", "{llm_top_logprobs} applies only to {llm_score} mte")
	case o.PTruePrompt != "" && o.Score != "ptrue":
		return fault.Fieldf("llm_ptrue_prompt", "{llm_ptrue_prompt} applies only to {llm_score} ptrue")
	}
	if o.NLIBaseURL != "" {
		if u, err := url.Parse(o.NLIBaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fault.Fieldf("llm_nli_base_url", "{llm_nli_base_url} %q: want an http:// or https:// URL", o.NLIBaseURL)
		}
	}
	return nil
}
