package llmproxy

import (
	"net/url"
	"slices"
	"strings"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/entail"
	"github.com/genlens/genlens/llm"
	"github.com/genlens/genlens/metric/uncertainty"
)

// EnsureDefaults sets the zero Samples, Score, TopLogprobs and PTruePrompt
// of o to their defaults. New calls it; a transport that checks its
// options before it opens the upstream and the judge (serve) calls it
// and Validate on the same values.
func (o *Options) EnsureDefaults() {
	if o.Samples == 0 {
		o.Samples = DefaultSamples
	}
	if o.Score == "" {
		o.Score = DefaultScore
	}
	if o.TopLogprobs == 0 && slices.Contains(topScores, o.Score) {
		o.TopLogprobs = llm.MaxTopLogprobs
	}
	if o.PTruePrompt == "" && o.Score == "ptrue" {
		o.PTruePrompt = llm.PTruePrompt
	}
}

// Validate checks the settings of o a person chooses, with their
// defaults in place (EnsureDefaults): k, the score, what the score needs
// (an entailment judge for the semantic scores, and none for the others;
// the alternatives of mte, cocoa-mte and ccp; p(True)'s template) and the
// judge's names. A bad
// setting is a *fault.FieldError naming it in braces as serve's options
// do without their llm_ prefix: {samples}, {score}, {nli}, {nli_weights},
// {nli_base_url}, {nli_model}, {top_logprobs}, {ptrue_prompt},
// {similarity}. The
// upstream client, the judge's model files and an embedder are checked
// when New opens them.
func (o *Options) Validate() error {
	d, ok := uncertainty.Lookup(o.Score)
	switch {
	case o.Samples < 2 || o.Samples > MaxSamples:
		return fault.Fieldf("samples", "{samples} %d: want 2 to %d (an uncertainty needs two samples)", o.Samples, MaxSamples)
	case !ok || !slices.Contains(Scores(), o.Score):
		return fault.Fieldf("score", "{score} %q%s: want %s", o.Score, uncertainty.DidYouMean(o.Score, Scores()), strings.Join(Scores(), ", "))
	}
	j := o.Judge
	semantic := d.Needs&judgeNeeds != 0
	top := slices.Contains(topScores, o.Score)
	nliSim := o.Similarity == string(uncertainty.SimilarityNLI)
	if o.Similarity != "" && o.Similarity != string(uncertainty.SimilarityRougeL) && !nliSim {
		return fault.Fieldf("similarity", "{similarity} %q: want %s or %s", o.Similarity, uncertainty.SimilarityRougeL, uncertainty.SimilarityNLI)
	}
	if o.Similarity != "" && !slices.Contains(SimilarityScores(), o.Score) {
		return fault.Fieldf("similarity", "{similarity} applies only to {score} %s", strings.Join(SimilarityScores(), ", "))
	}
	judge := "{nli} NAME with {nli_weights} DIR, or {nli_base_url} URL with {nli_model} NAME"
	switch {
	case j.NLI != "" && j.BaseURL != "":
		return fault.Fieldf("nli", "give {nli} or {nli_base_url}, not both")
	case (j.NLI != "" || j.BaseURL != "") && !semantic && !nliSim:
		return fault.Fieldf("score", "{score} %q takes no entailment judge: the judge applies to %s, and to %s with {similarity} nli", o.Score,
			strings.Join(SemanticScores(), ", "), strings.Join(SimilarityScores(), ", "))
	case semantic && j.NLI == "" && j.BaseURL == "":
		return fault.Fieldf("score", "{score} %s %s: give %s", o.Score, judgeUse(d.Needs), judge)
	case nliSim && j.NLI == "" && j.BaseURL == "":
		return fault.Fieldf("similarity", "{similarity} nli is the entailment judge's probability: give %s", judge)
	case j.NLI != "" && !slices.Contains(entail.Models, j.NLI):
		return fault.Fieldf("nli", "{nli} %q: want one of %s", j.NLI, strings.Join(entail.Models, ", "))
	case j.NLI != "" && j.Weights == "":
		return fault.Fieldf("nli_weights", "{nli} %s needs {nli_weights} DIR, the model's directory", j.NLI)
	case j.NLI == "" && j.Weights != "":
		return fault.Fieldf("nli_weights", "{nli_weights} needs {nli} NAME")
	case j.BaseURL == "" && (j.Model != "" || j.APIKey != ""):
		return fault.Fieldf("nli_model", "{nli_model} and its key need {nli_base_url} URL")
	case j.BaseURL != "" && j.Model == "":
		return fault.Fieldf("nli_model", "{nli_base_url} needs {nli_model} NAME")
	case len(j.Model) > MaxModel:
		return fault.Fieldf("nli_model", "{nli_model}: %d bytes, at most %d", len(j.Model), MaxModel)
	case o.TopLogprobs != 0 && !top:
		return fault.Fieldf("top_logprobs", "{top_logprobs} applies only to {score} %s", strings.Join(topScores, ", "))
	case top && (o.TopLogprobs < 1 || o.TopLogprobs > llm.MaxTopLogprobs):
		return fault.Fieldf("top_logprobs", "{top_logprobs} %d: want 1 to %d (0: %d)", o.TopLogprobs, llm.MaxTopLogprobs, llm.MaxTopLogprobs)
	case o.PTruePrompt != "" && o.Score != "ptrue":
		return fault.Fieldf("ptrue_prompt", "{ptrue_prompt} applies only to {score} ptrue")
	case o.Score == "ptrue" && !strings.Contains(o.PTruePrompt, "{answer}"):
		return fault.Fieldf("ptrue_prompt", "{ptrue_prompt}: the template has no place for the proposed answer (the word answer in braces)")
	}
	if j.BaseURL != "" {
		if u, err := url.Parse(j.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fault.Fieldf("nli_base_url", "{nli_base_url} %q: want an http:// or https:// URL", j.BaseURL)
		}
	}
	return nil
}

// SimilarityScores lists the scores that read a similarity of texts
// (Options.Similarity): of the answer with the samples, of the samples,
// or of an answer with itself without one of its tokens.
func SimilarityScores() []string {
	var names []string
	for _, d := range uncertainty.Defs() {
		if d.Needs&(uncertainty.NeedsSimilarity|uncertainty.NeedsAnswerTokenSimilarity|uncertainty.NeedsSampleTokenSimilarity) != 0 {
			names = append(names, d.Name)
		}
	}
	slices.Sort(names)
	return names
}

// judgeUse says what a score needing needs asks of the judge.
func judgeUse(needs uncertainty.Needs) string {
	switch {
	case needs&uncertainty.NeedsJudge != 0:
		return "clusters the samples by entailment"
	case needs&uncertainty.NeedsAlternativesEntailment != 0:
		return "weighs the answer's tokens against their alternatives by entailment"
	case needs&uncertainty.NeedsAnswerEntailmentProbs != 0:
		return "reads the entailment probabilities of the answer with the samples"
	}
	return "reads the entailment probabilities of the pairs of samples"
}
