package server

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/service/llmproxy"
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
// defaults: the proxy's (llmproxy.Options.EnsureDefaults) and the
// upstream's timeout.
func (o *LLMOptions) EnsureDefaults() {
	po := o.proxyOptions("")
	po.EnsureDefaults()
	o.Samples, o.Score = po.Samples, po.Score
	if o.Timeout == 0 {
		o.Timeout = llmproxy.DefaultTimeout
	}
}

// proxyOptions are the settings of o the proxy checks itself, with the
// template of p(True)'s question.
func (o *LLMOptions) proxyOptions(ptrue string) llmproxy.Options {
	return llmproxy.Options{Samples: o.Samples, Score: o.Score, TopLogprobs: o.TopLogprobs, PTruePrompt: ptrue, Similarity: o.Similarity,
		Judge: llmproxy.Judge{NLI: o.NLI, Weights: o.NLIWeights, BaseURL: o.NLIBaseURL, Model: o.NLIModel, APIKey: o.NLIAPIKey}}
}

// Validate checks the proxy's options, with their defaults in place: a
// bad field is a *fault.FieldError ({llm_upstream}, {llm_samples},
// {llm_score}, {llm_timeout}, {llm_nli}, {llm_top_logprobs}, ...). The
// settings of the proxy itself are checked by llmproxy.Options.Validate,
// their fields prefixed llm_; the template file of {llm_ptrue_prompt} is
// read, and checked, when the proxy is made.
func (o *LLMOptions) Validate() error {
	u, err := url.Parse(o.Upstream)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return fault.Fieldf("llm_upstream", "{llm_upstream} %q: want an http:// or https:// URL", o.Upstream)
	case o.Timeout <= 0:
		return fault.Fieldf("llm_timeout", "{llm_timeout} %v: want a positive duration", o.Timeout)
	}
	ptrue := ""
	if o.PTruePrompt != "" {
		ptrue = "{answer}" // a stand-in: the file is read when the proxy is made
	}
	po := o.proxyOptions(ptrue)
	po.EnsureDefaults()
	if err := po.Validate(); err != nil {
		return prefixField(err, "llm_")
	}
	switch {
	case o.Prefix != "" && o.Embedder == "":
		return fault.Fieldf("llm_prefix", "{llm_prefix} %s applies to the texts of {llm_embedder}: give the embedder", o.Prefix)
	case o.Prefix != "" && !slices.Contains(bert.Prefixes, o.Prefix):
		return fault.Fieldf("llm_prefix", "{llm_prefix} %q: want %s", o.Prefix, strings.Join(bert.Prefixes, ", "))
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

// prefixField is err, a field error of a settings struct nested in the
// server's options, with its fields named as the server's options name
// them: prefix added to the field and to every field in its message.
func prefixField(err error, prefix string) error {
	var fe *fault.FieldError
	if !errors.As(err, &fe) {
		return err
	}
	return &fault.FieldError{Field: prefix + fe.Field, Msg: fieldRef.ReplaceAllString(fe.Msg, "{"+prefix+"$1}")}
}

// fieldRef is a field named in a message: {name}.
var fieldRef = regexp.MustCompile(`\{([a-z_]+)\}`)
