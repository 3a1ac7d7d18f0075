package llmjob

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/format/jsonnum"
	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/job/internal/textembed"
	"github.com/genlens/genlens/llm"
	"github.com/genlens/genlens/llm/chatnli"
	"github.com/genlens/genlens/metric/evalstat"
	"github.com/genlens/genlens/metric/kernel"
	"github.com/genlens/genlens/metric/uncertainty"
	"github.com/genlens/genlens/network/nli"
)

// EntropyRequest is a request of `genlens entropy`: how uncertain is an
// LLM about each prompt, scored as the predictive kernel entropy of its
// sampled answers (Gruber & Buettner, "A Bias-Variance-Covariance
// Decomposition of Kernel Scores for Generative Models", ICML 2024,
// Algorithm 1), beside the lexical-similarity baseline and, on request,
// the scores of the samples' similarity graph (uncertainty.KLE, EigV,
// Degree), with the AUROC of each for detecting incorrect answers. Start
// from NewEntropyRequest, which holds the command line's defaults.
//
// The kernel-specific fields are optional so that one given for a kernel
// that would ignore it is refused, as the command line refuses the flag:
// T and Cumulative belong to the cs kernel, Embeddings, EmbeddingsKey and
// Gamma to the vector kernels (Embeddings also to the embedding
// similarity), all of them to the kernel-entropy score; Similarity to the
// graph scores, KLET to kle.
type EntropyRequest struct {
	In            string  `json:"in" help:"answers file (.jsonl or .parquet; or the argument)"`
	Embeddings    string  `json:"embeddings,omitempty" help:"optional .npy/.npz with a (rows, samples, d) array of sample embeddings"` // (rows, samples, d) array; else embeddings in the rows
	EmbeddingsKey string  `json:"embeddings_key,omitempty" help:"array name inside an {embeddings} .npz"`                              // array inside an Embeddings .npz
	Kernel        string  `json:"kernel"`                                                                                              // cs or a vector kernel (kernel.Names)
	T             *int    `json:"t,omitempty"`                                                                                         // cs: subsequence length; nil means 2
	Cumulative    *bool   `json:"cumulative,omitempty"`                                                                                // cs: sum subsequence lengths 1..t (nil: true, as the authors' code); false: length t only, as the paper's text
	Gamma         string  `json:"gamma,omitempty"`                                                                                     // rbf, laplacian, poly: dim, median or a number; "" means dim
	HoldoutFirst  bool    `json:"holdout_first" help:"judge samples[0]; score uncertainty on samples[1:]"`                             // judge samples[0], score samples[1:]
	Threshold     float64 `json:"threshold"`                                                                                           // RougeL-F above which an answer is correct, in [0, 1)
	// Scores is a comma-separated list of the names of the score table
	// (kernel-entropy, lexsim, kle, eigv, degree, ecc, pe, ne, msp,
	// perplexity, mte, ...), or all: every score computable from what is
	// given; "" means kernel-entropy,lexsim.
	Scores     string   `json:"scores,omitempty"`
	Similarity string   `json:"similarity,omitempty"` // of the graph scores, cocoa-*, sentence-sar, token-sar, sar: rougel (""), embedding or nli
	KLET       *float64 `json:"kle_t,omitempty"`      // kle: heat-kernel time; nil means 0.3
	// Embedder and Weights compute the samples' embeddings in process
	// with a BERT sentence embedder (bert.Names) from a model directory,
	// instead of reading them from the rows or Embeddings.
	Embedder string `json:"embedder,omitempty"`
	Weights  string `json:"weights,omitempty"`
	// Prefix is what the embedder puts before every sample: query (""),
	// passage or none (bert.Prefixes). The kernel-entropy paper's
	// experiments embed the bare answers with e5-small-v2: none.
	Prefix string `json:"prefix,omitempty" help:"with {embedder}: query, passage or none, what goes before every text (e5-small-v2: \"query: \", \"passage: \" or nothing; the kernel-entropy paper's setting is none); query by default"`

	// The entailment judge of se, se-discrete, numsets, label-prob,
	// semantic-density and luq: an NLI model
	// in process (NLI, one of entail.Models, from the directory NLIWeights;
	// see OpenNLI), or an OpenAI-compatible chat model (NLIBaseURL,
	// NLIModel; chatnli.Judge).
	NLI          string `json:"nli,omitempty" help:"NLI model judging entailment for se, se-discrete, numsets, label-prob, semantic-density, luq: deberta-large-mnli (fetched once from the Hugging Face hub unless {nli_weights} names it), deberta or bert (a BERT cross-encoder; these with {nli_weights})"`
	NLIWeights   string `json:"nli_weights,omitempty" help:"directory of the {nli} model (config.json, its tokenizer files, weights), or a Hugging Face model id (org/name) fetched once"`
	NLIBaseURL   string `json:"nli_base_url,omitempty" help:"API root of an OpenAI-compatible chat model judging entailment for se, se-discrete, numsets, label-prob, semantic-density, luq"`
	NLIModel     string `json:"nli_model,omitempty" help:"the entailment judge's model name on {nli_base_url}"`
	NLIAPIKeyEnv string `json:"nli_api_key_env,omitempty" help:"environment variable holding the API key of {nli_base_url}"`

	// RequestTimeout bounds every request this command sends to a model,
	// retries included: the entailment judge's ({nli_base_url}) and
	// p(True)'s ({base_url}); 0 is DefaultRequestTimeout.
	RequestTimeout time.Duration `json:"request_timeout,omitempty" help:"time limit of each request to a model (the {nli_base_url} judge, p(True)'s question), retries included"`

	// BaseURL, Model, APIKeyEnv and API name the model p(True) asks (the
	// model that sampled the answers) as SampleRequest's fields do; the
	// command line sets them from its sampling flags.
	BaseURL   string `json:"base_url,omitempty"`
	Model     string `json:"model,omitempty"`
	APIKeyEnv string `json:"api_key_env,omitempty"`
	API       string `json:"api,omitempty"` // chat (or "") or completions
	// PTruePrompt is a file holding the p(True) question's template
	// (see PTruePrompt); "" uses PTruePrompt.
	PTruePrompt string `json:"ptrue_prompt,omitempty" help:"file holding the p(True) question's template, which must place the answer under test and may place the question and the samples (the words answer, question, samples in braces; default: Kadavath et al.'s)"`
	// The files holding the templates of the questions of
	// ptrue-empirical, verbalized-1s, verbalized-2s and linguistic-1s
	// (see llm.Questions); "" uses genlens's.
	PTrueEmpiricalPrompt string `json:"ptrue_empirical_prompt,omitempty" help:"file holding ptrue-empirical's question template, which must place the answer under test and may place the question (the words answer, question in braces; default: genlens's)"`
	Verbalized1SPrompt   string `json:"verbalized_1s_prompt,omitempty" help:"file holding verbalized-1s's question template, which must place the question (the word question in braces) and ask for 'Probability: 0.x' (default: genlens's)"`
	Verbalized2SPrompt   string `json:"verbalized_2s_prompt,omitempty" help:"file holding verbalized-2s's follow-up question, asked in a chat after the question and the answer under test, which must ask for 'Probability: 0.x' (default: genlens's)"`
	Linguistic1SPrompt   string `json:"linguistic_1s_prompt,omitempty" help:"file holding linguistic-1s's question template, which must place the question (the word question in braces) and ask for an expression of confidence (default: genlens's)"`

	// AUARC adds the area under each score's accuracy–rejection curve to
	// the summary (and the curves' chart to the artifacts).
	AUARC bool `json:"auarc,omitempty" help:"also report each score's area under the accuracy-rejection curve (AUARC), and chart the curves (accuracy_rejection.png)"`
}

// MaxKLET bounds EntropyRequest.KLET: far beyond it the heat kernel keeps
// only the eigenvalues of L that are 0 up to rounding, and which of those
// survive depends on the rounding.
const MaxKLET = 1e4

// MaxGraphSamples bounds the samples of one row that kle, eigv and degree
// score: their m × m matrix and its O(m³) eigensolve stay within 8 MB and
// about a second per row.
const MaxGraphSamples = 1000

// NewEntropyRequest returns a request with the command line's defaults.
func NewEntropyRequest() EntropyRequest {
	return EntropyRequest{Kernel: "cs", Threshold: uncertainty.DefaultRougeThreshold, API: "chat", RequestTimeout: DefaultRequestTimeout}
}

// DefaultRequestTimeout bounds a request to a model, retries included,
// when the request names no bound: a judge that never answers fails the
// run after it (it held the run for 5 attempts of 60 s).
const DefaultRequestTimeout = 60 * time.Second

// requestTimeout is the bound of one request to a model.
func (r *EntropyRequest) requestTimeout() time.Duration {
	if r.RequestTimeout <= 0 {
		return DefaultRequestTimeout
	}
	return r.RequestTimeout
}

// Validate checks the fields that need no input file.
func (r *EntropyRequest) Validate() (verr error) {
	defer func() { verr = job.WithDefault(verr, r, NewEntropyRequest()) }()
	if r.RequestTimeout < 0 {
		return fault.Fieldf("request_timeout", "{request_timeout} %v: want a positive duration", r.RequestTimeout)
	}
	if err := job.CheckTimeout("request_timeout", r.RequestTimeout, llm.MaxTimeout); err != nil {
		return err
	}
	if r.T != nil {
		if err := job.CheckLimits("entropy", job.Lim("t", *r.T, maxCSLength)); err != nil {
			return err
		}
	}
	_, err := r.options()
	return err
}

// options validates the request and returns the uncertainty options
// without the vector kernel, whose bandwidth the data resolve, and the
// bandwidth rule.
func (r *EntropyRequest) options() (entropyOptions, error) {
	var o entropyOptions
	t := uncertainty.DefaultSequence.T
	if r.T != nil {
		t = *r.T
	}
	vector := r.Kernel != "cs"
	switch {
	case r.In == "":
		return o, fault.Fieldf("in", "entropy: {in} FILE is required")
	case t < 1:
		return o, fault.Fieldf("t", "{t} %d: want a positive subsequence length", t)
	case !(r.Threshold >= 0 && r.Threshold < 1):
		return o, fault.Fieldf("threshold", "{threshold} %v: want a value in [0, 1)", r.Threshold)
	case vector && !slices.Contains(kernel.Names, r.Kernel):
		return o, fault.Fieldf("kernel", "{kernel} %q: want cs, %s", r.Kernel, strings.Join(kernel.Names, ", "))
	}
	defs, err := r.scores()
	if err != nil {
		return o, err
	}
	scores := simScores(defs)
	if err := r.checkScoreFields(defs, scores); err != nil {
		return o, err
	}
	if err := r.checkNLIFields(defs); err != nil {
		return o, err
	}
	if err := r.checkPTrueFields(defs); err != nil {
		return o, err
	}
	notFor := func(field, appliesTo string) error {
		return fault.Fieldf(field, "{%s} applies only to %s, not {kernel} %s", field, appliesTo, r.Kernel)
	}
	if vector {
		switch {
		case r.T != nil:
			return o, notFor("t", "the cs kernel")
		case r.Cumulative != nil:
			return o, notFor("cumulative", "the cs kernel")
		}
	} else {
		vk := "the vector kernels (" + strings.Join(kernel.Names, ", ") + ") and {similarity} embedding"
		switch {
		case r.Gamma != "":
			return o, notFor("gamma", "the rbf, laplacian and poly kernels")
		case r.embeddingSimilarity(defs):
		case r.Embeddings != "":
			return o, notFor("embeddings", vk)
		case r.EmbeddingsKey != "":
			return o, notFor("embeddings_key", vk)
		case r.Embedder != "":
			return o, notFor("embedder", vk)
		}
	}
	if err := textembed.CheckPrefix(r.Embedder, r.Prefix); err != nil {
		return o, err
	}
	if err := textembed.Check(r.Embedder, r.Weights, r.Embeddings); err != nil {
		return o, err
	}
	if r.EmbeddingsKey != "" && r.Embeddings == "" {
		return o, fault.Fieldf("embeddings_key", "{embeddings_key} %s: give the .npz with {embeddings}", r.EmbeddingsKey)
	}
	thr := r.Threshold
	cumulative := uncertainty.DefaultSequence.Cumulative
	if r.Cumulative != nil {
		cumulative = *r.Cumulative
	}
	o.defs = defs
	o.opt = uncertainty.Options{Sequence: kernel.CS{T: t, Cumulative: cumulative},
		HoldoutFirst: r.HoldoutFirst, RougeThreshold: &thr, Scores: scores,
		Similarity: uncertainty.SimilarityRougeL, KLETime: uncertainty.DefaultKLETime}
	if r.Similarity != "" {
		o.opt.Similarity = uncertainty.Similarity(r.Similarity)
	}
	if r.KLET != nil {
		o.opt.KLETime = *r.KLET
	}
	if r.vectorKernel(scores) {
		if o.bw, err = job.KernelBandwidth("entropy", r.Kernel, r.Gamma, "dim"); err != nil {
			return o, err
		}
	}
	return o, nil
}

// scores parses Scores: a comma-separated list of score names, or all.
// The scores come back in the order of the score table (the order of the
// result's keys), each once.
func (r *EntropyRequest) scores() ([]*scoreDef, error) {
	list := strings.TrimSpace(r.Scores)
	var want []string
	switch strings.ToLower(list) {
	case "":
		want = defaultScoreNames
	case "all":
		for _, d := range entropyScores {
			want = append(want, d.name)
		}
	default:
		for _, name := range strings.Split(list, ",") {
			n := strings.ToLower(strings.TrimSpace(name))
			switch {
			case n == "":
			case scoreByName(n) == nil:
				typed := strings.TrimSpace(name)
				return nil, fault.Fieldf("scores", "{scores}: unknown score %q%s (want a comma-separated list of %s, or all)", typed, uncertainty.DidYouMean(typed, scoreNames()), ScoreNames())
			default:
				want = append(want, n)
			}
		}
	}
	if len(want) == 0 {
		return nil, fault.Fieldf("scores", "{scores} %q names no score (want a comma-separated list of %s, or all)", r.Scores, ScoreNames())
	}
	var defs []*scoreDef
	for i, d := range entropyScores {
		if slices.Contains(want, d.name) {
			defs = append(defs, &entropyScores[i])
		}
	}
	return defs, nil
}

// allScores reports whether the request asks for every computable score.
func (r *EntropyRequest) allScores() bool {
	return strings.EqualFold(strings.TrimSpace(r.Scores), "all")
}

// checkScoreFields refuses the fields that no asked-for score uses, and
// checks the graph scores' fields.
func (r *EntropyRequest) checkScoreFields(defs []*scoreDef, scores []uncertainty.Score) error {
	switch {
	case r.Similarity != "" && !usesSimilarity(defs):
		return fault.Fieldf("similarity", "{similarity} applies only to {scores} %s", similarityScoreNames())
	case r.Similarity != "" && r.Similarity != string(uncertainty.SimilarityRougeL) && r.Similarity != string(uncertainty.SimilarityEmbedding) && r.Similarity != string(uncertainty.SimilarityNLI):
		return fault.Fieldf("similarity", "{similarity} %q: want rougel, embedding or nli", r.Similarity)
	case r.Similarity == string(uncertainty.SimilarityNLI) && !r.hasNLI():
		return fault.Fieldf("similarity", "{similarity} nli needs an entailment judge (give {nli} with {nli_weights}, or {nli_base_url} with {nli_model})")
	case r.KLET != nil && !slices.Contains(scores, uncertainty.ScoreKLE):
		return fault.Fieldf("kle_t", "{kle_t} applies only to {scores} kle")
	case r.KLET != nil && !(*r.KLET > 0 && *r.KLET <= MaxKLET):
		return fault.Fieldf("kle_t", "{kle_t} %v: want a heat-kernel time in (0, %g]", *r.KLET, float64(MaxKLET))
	}
	if slices.Contains(scores, uncertainty.ScoreKernelEntropy) {
		return nil
	}
	notKE := func(field string) error {
		return fault.Fieldf(field, "{%s} applies only to {scores} kernel-entropy", field)
	}
	switch {
	case r.Kernel != "cs":
		return notKE("kernel")
	case r.T != nil:
		return notKE("t")
	case r.Cumulative != nil:
		return notKE("cumulative")
	case r.Gamma != "":
		return notKE("gamma")
	}
	return nil
}

// vectorKernel reports whether the request scores kernel entropy with a
// vector kernel, on embeddings.
func (r *EntropyRequest) vectorKernel(scores []uncertainty.Score) bool {
	return r.Kernel != "cs" && slices.Contains(scores, uncertainty.ScoreKernelEntropy)
}

// embeddingSimilarity reports whether the request computes a score of
// defs from the similarity of the embeddings.
func (r *EntropyRequest) embeddingSimilarity(defs []*scoreDef) bool {
	return r.Similarity == string(uncertainty.SimilarityEmbedding) && usesSimilarity(defs)
}

// usesSimilarity reports whether a score of defs reads the similarity of
// answers that {similarity} chooses: the graph scores, and those of
// uncertainty.NeedsSimilarity.
func usesSimilarity(defs []*scoreDef) bool {
	return slices.ContainsFunc(defs, readsSimilarity)
}

// similarityNeeds are the statistics of a score that the run's similarity
// computes.
const similarityNeeds = uncertainty.NeedsSimilarity | uncertainty.NeedsAnswerTokenSimilarity | uncertainty.NeedsSampleTokenSimilarity

// readsSimilarity reports whether d reads the run's similarity.
func readsSimilarity(d *scoreDef) bool {
	return d.sim.Graph() || d.needs&similarityNeeds != 0
}

// similarityScoreNames lists the scores {similarity} applies to.
func similarityScoreNames() string {
	var names []string
	for i := range entropyScores {
		if readsSimilarity(&entropyScores[i]) {
			names = append(names, entropyScores[i].name)
		}
	}
	return strings.Join(names, ", ")
}

type entropyOptions struct {
	opt  uncertainty.Options
	bw   kernel.Bandwidth
	defs []*scoreDef // the scores asked for, in the table's order
}

// EntropyResult is the result of `genlens entropy`; it marshals to the
// command's --json document.
type EntropyResult struct {
	Items   []EntropyItem  `json:"items"`
	Summary EntropySummary `json:"summary"`
	// Warnings say why a number of the summary cannot mean much (no
	// labelled prompt, so no AUROC), naming request fields in braces;
	// absent when there is nothing to say.
	Warnings job.Messages `json:"warnings,omitempty"`
	// OutDir is where the command line wrote the artifacts ("" for
	// none), for the text to point at the per-prompt scores.
	OutDir string `json:"-"`

	curves []rejectionCurve // with {auarc}, for the chart
}

// EntropyItem is one prompt's scores, an entry of Scores for each score
// of the result (absent otherwise), marshalled between the id and
// correct. They are null, with a reason, when the prompt has fewer than
// two usable samples, or when a score is unavailable for it (its row
// lacks the logprobs); Correct is null when correctness is unknown (no
// label, and no answer or no reference).
type EntropyItem struct {
	ID      string
	Scores  ScoreValues
	Correct *bool
	Reason  string
}

// EntropySummary aggregates the items: AUROC of each score for detecting
// incorrect answers over the labelled prompts with every score (null
// when they are all correct or all incorrect). The uncertainties rank as
// they are, lexical similarity, a confidence, negated: 1 means every
// incorrect answer is more uncertain than every correct one, 0.5 chance,
// for every score. Kernel is the kernel of the kernel entropy,
// Similarity and KLET those of the graph scores; each is absent when no
// score asked for uses it.
type EntropySummary struct {
	N        int         `json:"n"`
	Skipped  int         `json:"skipped"`
	Labelled int         `json:"labelled"`
	Accuracy jsonnum.Num `json:"accuracy"`
	AUROC    ScoreValues `json:"auroc"`
	// AUARC is each score's area under the accuracy–rejection curve
	// (evalstat.AUARC) over the same prompts, with {auarc}: the mean
	// accuracy of the answers kept when the most uncertain are rejected,
	// at every rejection rate (null with no labelled prompt).
	AUARC      ScoreValues  `json:"auarc,omitempty"`
	Kernel     string       `json:"kernel,omitempty"`
	Similarity string       `json:"similarity,omitempty"`
	KLET       *jsonnum.Num `json:"kle_t,omitempty"`
	// JudgeProbabilities says where the entailment probabilities of the
	// scores that read them (semantic-density, luq, ccp, the nli
	// similarity) come from: "model" (the in-process NLI model's
	// softmax), "logprobs" (the chat judge's answer token, its three
	// labels renormalised from top_logprobs) or "one-hot" (the chat
	// judge's label read as probability 1, on some pairs at least);
	// absent when no such score is computed.
	JudgeProbabilities string `json:"judge_probabilities,omitempty"`
}

// JudgeProbabilitiesModel is EntropySummary.JudgeProbabilities of an
// in-process NLI model.
const JudgeProbabilitiesModel = "model"

// numOf returns a pointer to v as a Num; +0 keeps a zero computed as -0
// (a kernel entropy with every pair at k = 0) from printing as -0.
func numOf(v float64) *jsonnum.Num {
	n := jsonnum.Num(v + 0)
	return &n
}

// Score returns the item's value of a score, named by its key
// ("kernel_entropy") or its {scores} name ("kernel-entropy"); nil when
// not in the result.
func (it *EntropyItem) Score(name string) *jsonnum.Num {
	if d := scoreByName(name); d != nil {
		name = d.key
	}
	return it.Scores[name]
}

// Scores returns the keys of the scores the result holds, in the order
// of the score table: those with an AUROC entry (which is there, null or
// not, for every score of the result).
func (r *EntropyResult) Scores() []string { return r.Summary.AUROC.keys() }

// Entropy runs `genlens entropy`: it reads the answers (and embeddings)
// through env.FS, scores every prompt with uncertainty.Evaluate and
// reports the prompts done through env.Progress.
func Entropy(ctx context.Context, env job.Env, req EntropyRequest) (*EntropyResult, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	o, err := req.options()
	if err != nil {
		return nil, err
	}
	fsys := env.InputFS()
	recs, err := dataio.ReadRecordsFS(fsys, req.In)
	if err != nil {
		return nil, err
	}
	prompts := make([]uncertainty.Prompt, len(recs))
	graph := slices.ContainsFunc(o.opt.Scores, uncertainty.Score.Graph)
	for i, r := range recs {
		if graph && len(r.Samples) > MaxGraphSamples {
			return nil, &fault.InputError{File: req.In, Line: r.Line, Field: "samples",
				Msg: fmt.Sprintf("%d samples; kle, eigv and degree score at most %d per row", len(r.Samples), MaxGraphSamples)}
		}
		prompts[i] = uncertainty.Prompt{ID: r.ID, Samples: r.Samples, Answer: r.Answer, References: r.Reference, Correct: r.Correct}
	}
	opt := o.opt
	vector := req.vectorKernel(opt.Scores)
	if vector || req.embeddingSimilarity(o.defs) {
		if err := attachEmbeddings(ctx, env, prompts, recs, req); err != nil {
			return nil, err
		}
	}
	if vector {
		if opt.Kernel, err = job.ResolveKernel(req.Kernel, o.bw, scoredEmbeddings(prompts, req.HoldoutFirst), req.In); err != nil {
			return nil, err
		}
	}
	opt.Progress = env.Progress
	// A score whose source is not given is left out.
	given := map[scoreSource]bool{"": true, sourceNLI: req.hasNLI(), sourceModel: req.BaseURL != "" && req.Model != ""}
	var defs []*scoreDef
	var leftOut, leftReasons []string
	for _, d := range o.defs {
		if !given[d.source] {
			leftOut = append(leftOut, d.name)
			leftReasons = append(leftReasons, sourceMissing[d.source])
			continue
		}
		defs = append(defs, d)
	}
	if len(defs) == 0 {
		return nil, fault.Fieldf("scores", "{scores}: no score can be computed from what is given: %s", scoreReasonGroups(leftOut, leftReasons))
	}
	// The rows scored: those with two usable samples at least (Evaluate
	// skips the others, saying why), which the judge judges first, since
	// the graph scores of the nli similarity read its judgements.
	ps := make([]*promptScores, len(recs))
	scoredRow := make([]bool, len(recs))
	for i := range recs {
		ps[i] = newPromptScores(recs[i], req.HoldoutFirst)
		scoredRow[i] = len(ps[i].samples) >= 2
	}
	nliSim := opt.Similarity == uncertainty.SimilarityNLI && usesSimilarity(defs)
	nliGraph := nliSim && slices.ContainsFunc(opt.Scores, uncertainty.Score.Graph)
	var chat *chatnli.Judge
	var m nli.Model
	workers := 0 // an in-process model: one prompt per CPU
	probNames, sampleProbs, answerProbs := probabilityScores(defs)
	if nliSim || slices.ContainsFunc(defs, func(d *scoreDef) bool { return d.source == sourceNLI }) {
		if m, chat, err = entailmentJudge(ctx, env, &req); err != nil {
			return nil, err
		}
		if chat != nil {
			workers = 8 // a server: requests in flight
		}
		if slices.ContainsFunc(defs, func(d *scoreDef) bool { return d.needs&uncertainty.NeedsJudge != 0 }) {
			if err := clusterAnswers(ctx, m, req.In, recs, ps, scoredRow, workers); err != nil {
				return nil, err
			}
		}
		// The nli similarity of the samples (the graph scores, SAR's) and of
		// the answer with them (CoCoA's) is of the judge's probabilities.
		nliSamples := nliGraph || nliSim && slices.ContainsFunc(defs, func(d *scoreDef) bool {
			return d.needs&uncertainty.NeedsSimilarity != 0 && d.needs&uncertainty.NeedsSampleLogprobs != 0
		})
		nliAnswer := nliSim && slices.ContainsFunc(defs, func(d *scoreDef) bool {
			return d.needs&uncertainty.NeedsSimilarity != 0 && d.needs&uncertainty.NeedsAnswerLogprobs != 0
		})
		ask := uncertainty.JudgeAsk{Samples: sampleProbs || nliSamples, Diagonal: nliGraph, Answer: answerProbs || nliAnswer, Back: nliAnswer}
		if ask.Samples || ask.Answer {
			if err := judgeProbabilities(ctx, m, req.In, recs, ps, scoredRow, ask, workers); err != nil {
				return nil, err
			}
		}
		if slices.ContainsFunc(defs, func(d *scoreDef) bool { return d.needs&uncertainty.NeedsAlternativesEntailment != 0 }) {
			if err := judgeAlternatives(ctx, m, req.In, recs, ps, scoredRow, workers); err != nil {
				return nil, err
			}
		}
	}
	if nliGraph {
		for i := range prompts {
			prompts[i].Entailment = ps[i].sampleNLI
		}
	}
	results, err := entropyResults(ctx, prompts, opt)
	if err != nil {
		return nil, err
	}
	for i := range results {
		scoredRow[i] = scoredRow[i] && results[i].Reason == ""
	}
	if usesSimilarity(defs) {
		if err := attachSimilarities(ctx, prompts, ps, scoredRow, opt.Similarity, req.HoldoutFirst); err != nil {
			return nil, err
		}
	}
	answerTok := slices.ContainsFunc(defs, func(d *scoreDef) bool { return d.needs&uncertainty.NeedsAnswerTokenSimilarity != 0 })
	sampleTok := slices.ContainsFunc(defs, func(d *scoreDef) bool { return d.needs&uncertainty.NeedsSampleTokenSimilarity != 0 })
	if answerTok || sampleTok {
		sim, err := req.textSimilarity(ctx, env, opt.Similarity, m)
		if err != nil {
			return nil, err
		}
		tokWorkers := 0 // RougeL, an NLI model: one prompt per CPU
		switch {
		case opt.Similarity == uncertainty.SimilarityEmbedding:
			tokWorkers = 1 // the embedder uses the CPUs itself
		case nliSim:
			tokWorkers = workers
		}
		if err := attachTokenSimilarities(ctx, sim, req.In, recs, ps, scoredRow, answerTok, sampleTok, tokWorkers); err != nil {
			return nil, err
		}
	}
	if slices.ContainsFunc(defs, asksModel) {
		// The templates first: a bad one is refused before any request.
		ptrueTemplate := ""
		if containsScore(defs, "ptrue") {
			if ptrueTemplate, err = llm.ReadPTruePrompt(env.InputFS(), req.PTruePrompt); err != nil {
				return nil, err
			}
		}
		templates := map[string]string{}
		for _, d := range defs {
			if q, ok := llm.QuestionOf(d.name); ok && d.needs&uncertainty.NeedsQuestion != 0 {
				if templates[d.name], err = q.ReadTemplate(env.InputFS(), req.questionPrompt(d.name)); err != nil {
					return nil, err
				}
			}
		}
		client, err := ptrueClient(env, &req)
		if err != nil {
			return nil, err
		}
		if containsScore(defs, "ptrue") {
			if err := askPTrue(ctx, client, &req, ptrueTemplate, recs, ps, scoredRow); err != nil {
				return nil, err
			}
		}
		for _, d := range defs {
			if t, ok := templates[d.name]; ok {
				q, _ := llm.QuestionOf(d.name)
				if err := askQuestion(ctx, client, &req, q, t, recs, ps, scoredRow); err != nil {
					return nil, err
				}
			}
		}
	}
	out := &EntropyResult{Items: make([]EntropyItem, len(results))}
	for i, r := range results {
		out.Items[i] = EntropyItem{ID: r.ID, Scores: ScoreValues{}, Correct: r.Correct, Reason: r.Reason}
		for _, d := range defs {
			if d.sim != "" {
				out.Items[i].Scores[d.key] = numOf(r.Value(d.sim))
			}
		}
	}
	// The scores computed here: a score unavailable on every scored row
	// is left out (with the first row's reason); one unavailable on some
	// is null there, with why.
	type failure struct {
		rows  int
		first string
	}
	var failed []failure
	var computed []*scoreDef
	scored := 0
	for _, ok := range scoredRow {
		if ok {
			scored++
		}
	}
	itemReasons := make([][]string, len(results))
	itemFailed := make([][]string, len(results))
	for _, d := range defs {
		if d.value == nil {
			continue
		}
		var f failure
		vals := make([]float64, len(results))
		reasons := make([]string, len(results))
		for i, r := range results {
			vals[i] = math.NaN()
			if r.Reason != "" {
				continue
			}
			v, err := d.value(ps[i])
			if err != nil {
				reasons[i] = err.Error()
				if f.rows == 0 {
					f.first = fmt.Sprintf("line %d: %s", recs[i].Line, err)
				}
				f.rows++
				continue
			}
			vals[i] = v
		}
		if scored > 0 && f.rows == scored {
			leftOut = append(leftOut, d.name)
			leftReasons = append(leftReasons, firstReason(reasons))
			continue
		}
		computed = append(computed, d)
		failed = append(failed, f)
		for i := range results {
			out.Items[i].Scores[d.key] = numOf(vals[i])
			if reasons[i] != "" {
				itemFailed[i] = append(itemFailed[i], d.name)
				itemReasons[i] = append(itemReasons[i], reasons[i])
			}
		}
	}
	for i := range out.Items {
		if len(itemFailed[i]) > 0 {
			out.Items[i].Reason = scoreReasonGroups(itemFailed[i], itemReasons[i])
		}
	}
	kept := defs[:0:0]
	for _, d := range defs {
		if !slices.Contains(leftOut, d.name) {
			kept = append(kept, d)
		}
	}
	out.Summary, out.curves = summarizeEntropy(out.Items, kept, req.AUARC)
	if slices.Contains(opt.Scores, uncertainty.ScoreKernelEntropy) {
		out.Summary.Kernel = opt.Sequence.String()
		if opt.Kernel != nil {
			out.Summary.Kernel = opt.Kernel.String()
		}
	}
	if slices.ContainsFunc(opt.Scores, uncertainty.Score.Graph) {
		out.Summary.Similarity = string(opt.Similarity)
	}
	if slices.Contains(opt.Scores, uncertainty.ScoreKLE) {
		out.Summary.KLET = numOf(opt.KLETime)
	}
	if w := entropyLabelWarning(recs, req.HoldoutFirst, out.Summary); w != "" {
		out.Warnings = append(out.Warnings, w)
	}
	if len(leftOut) > 0 {
		out.Warnings = append(out.Warnings, "left out: "+scoreReasonGroups(leftOut, leftReasons))
	}
	if chat != nil && nliSim {
		probNames = append(probNames, "the nli similarity")
	}
	if m != nil && len(probNames) > 0 && (nliSim || slices.ContainsFunc(computed, func(d *scoreDef) bool { return slices.Contains(probNames, d.name) })) {
		out.Summary.JudgeProbabilities = JudgeProbabilitiesModel
		if chat != nil {
			out.Summary.JudgeProbabilities = chat.Source()
		}
		if chat != nil && chat.Source() == chatnli.SourceOneHot {
			out.Warnings = append(out.Warnings, "the chat entailment judge answers with one label and (on some pairs at least) without the logprobs of its answer token, so "+strings.Join(probNames, ", ")+" read that label's probability as 1: they are not computed from the probabilities of an NLI model ({nli}) or of the judge's answer token")
		}
	}
	if chat != nil && chat.Refused() > 0 {
		out.Warnings = append(out.Warnings, fmt.Sprintf("the entailment judge answered %d ordered pairs with something other than entailment, contradiction or neutral; those pairs count as not entailing", chat.Refused()))
	}
	for k, d := range computed {
		if f := failed[k]; f.rows > 0 {
			out.Warnings = append(out.Warnings, fmt.Sprintf("%s: unavailable on %d of %d scored rows, which are skipped (first, %s)", d.name, f.rows, scored, f.first))
		}
	}
	return out, nil
}

// textSimilarity returns the run's similarity sim of two texts other than
// the rows' samples (an answer without one of its tokens), m the judge of
// the nli similarity: nil for the embedding similarity without the
// embedder in process, which can embed only the samples read.
func (r *EntropyRequest) textSimilarity(ctx context.Context, env job.Env, sim uncertainty.Similarity, m nli.Model) (textSimilarity, error) {
	switch sim {
	case uncertainty.SimilarityNLI:
		return entailmentSimilarity(m), nil
	case uncertainty.SimilarityEmbedding:
	default:
		return rougeSimilarity, nil
	}
	if r.Embedder == "" {
		return nil, nil
	}
	e, err := textembed.Load(ctx, env, r.Embedder, r.Weights, r.Prefix)
	if err != nil {
		return nil, err
	}
	return embeddingSimilarity(e), nil
}

// firstReason returns the first non-empty reason.
func firstReason(reasons []string) string {
	for _, r := range reasons {
		if r != "" {
			return r
		}
	}
	return ""
}

// entropyResults scores the prompts with uncertainty.Evaluate, or, when
// no score of it is asked for, judges their answers and checks their
// samples as it does.
func entropyResults(ctx context.Context, prompts []uncertainty.Prompt, opt uncertainty.Options) ([]uncertainty.Result, error) {
	if len(opt.Scores) > 0 {
		results, _, err := uncertainty.Evaluate(ctx, prompts, opt)
		return results, err
	}
	nan := math.NaN()
	results := make([]uncertainty.Result, len(prompts))
	for i := range prompts {
		p := &prompts[i]
		r := uncertainty.Result{ID: p.ID, KernelEntropy: nan, LexicalSimilarity: nan, KLE: nan, EigV: nan, Degree: nan, Ecc: nan}
		r.Correct = uncertainty.Correctness(p, opt.HoldoutFirst, *opt.RougeThreshold)
		n := len(p.Samples)
		if opt.HoldoutFirst && n > 0 {
			n--
		}
		if n < 2 {
			r.Reason = fmt.Sprintf("%d usable sample(s); the scores need at least 2", n)
		}
		results[i] = r
	}
	if opt.Progress != nil {
		opt.Progress(len(prompts), len(prompts))
	}
	return results, nil
}

// summarizeEntropy aggregates the items over the scores defs: a prompt
// is skipped when one of its scores is null, and the AUROC of each score
// (and with auarc its AUARC and accuracy–rejection curve) is over the
// labelled prompts left.
func summarizeEntropy(items []EntropyItem, defs []*scoreDef, auarc bool) (EntropySummary, []rejectionCurve) {
	s := EntropySummary{N: len(items), Accuracy: jsonnum.Num(math.NaN()), AUROC: ScoreValues{}}
	if auarc {
		s.AUARC = ScoreValues{}
	}
	for _, d := range defs {
		s.AUROC[d.key] = numOf(math.NaN())
		if auarc {
			s.AUARC[d.key] = numOf(math.NaN())
		}
	}
	values := make([][]float64, len(defs))
	var wrong []bool
	correct := 0
items:
	for _, it := range items {
		for _, d := range defs {
			if n := it.Scores[d.key]; n == nil || math.IsNaN(float64(*n)) {
				s.Skipped++
				continue items
			}
		}
		if it.Correct == nil {
			continue
		}
		s.Labelled++
		if *it.Correct {
			correct++
		}
		for k, d := range defs {
			v := float64(*it.Scores[d.key])
			if d.confidence {
				v = -v // low confidence flags a wrong answer
			}
			values[k] = append(values[k], v)
		}
		wrong = append(wrong, !*it.Correct)
	}
	if s.Labelled == 0 {
		return s, nil
	}
	s.Accuracy = jsonnum.Num(float64(correct) / float64(s.Labelled))
	right := make([]bool, len(wrong))
	for i, w := range wrong {
		right[i] = !w
	}
	var curves []rejectionCurve
	for k, d := range defs {
		if a, err := evalstat.AUROC(values[k], wrong); err == nil {
			s.AUROC[d.key] = numOf(a)
		}
		if !auarc {
			continue
		}
		if x, y, err := evalstat.AccuracyRejection(values[k], right); err == nil {
			a, _ := evalstat.AUARC(values[k], right)
			s.AUARC[d.key] = numOf(a)
			curves = append(curves, rejectionCurve{label: d.label, rejected: x, accuracy: y})
		}
	}
	return s, curves
}

// rejectionCurve is one score's accuracy–rejection curve, for the chart.
type rejectionCurve struct {
	label              string
	rejected, accuracy []float64
}

// entropyLabelWarning says why the AUROCs are empty, or "": a prompt is
// labelled when its row has correct, or an answer under test and a
// reference. The answer under test is the row's answer, or with
// holdoutFirst its first sample; rows with references and samples but no
// answer are the common case of the latter left unset.
func entropyLabelWarning(recs []dataio.Record, holdoutFirst bool, sum EntropySummary) string {
	scored := sum.N - sum.Skipped
	switch {
	case scored == 0:
		return "" // every row is skipped, each with its reason
	case sum.Labelled > 0 && float64(sum.Accuracy) > 0 && float64(sum.Accuracy) < 1:
		return ""
	case sum.Labelled > 0:
		what := "correct"
		if float64(sum.Accuracy) == 0 {
			what = "incorrect"
		}
		return fmt.Sprintf("every one of the %d labelled answers is %s: an AUROC needs correct and incorrect answers, so it is empty", sum.Labelled, what)
	}
	refsOnly := 0 // rows with references and no answer or correct label
	for _, r := range recs {
		if len(r.Reference) > 0 && r.Answer == nil && r.Correct == nil {
			refsOnly++
		}
	}
	switch {
	case refsOnly > 0 && !holdoutFirst:
		return fmt.Sprintf("no prompt is labelled, so the AUROCs are empty: %d of %d rows have a reference but no answer, and without {holdout_first} the answer under test is the row's answer; set {holdout_first} to judge each row's first sample against its references (and score the others), or add answer or correct to the rows",
			refsOnly, len(recs))
	case holdoutFirst:
		return "no prompt is labelled, so the AUROCs are empty: with {holdout_first} a row's first sample is judged against its reference, and no scored row has a reference or a correct label"
	}
	return "no prompt is labelled, so the AUROCs are empty: a row is labelled by correct, or by an answer and a reference (with {holdout_first}, its first sample and a reference), and no scored row has them"
}

// attachEmbeddings sets each prompt's embedding rows from the records or
// from req.Embeddings, and rejects rows a vector kernel cannot score. A
// row with no samples gets no embeddings: it is skipped with a reason, as
// with the cs kernel.
func attachEmbeddings(ctx context.Context, env job.Env, prompts []uncertainty.Prompt, recs []dataio.Record, req EntropyRequest) error {
	if req.Embedder != "" {
		return embedSamples(ctx, env, prompts, recs, req.Embedder, req.Weights, req.Prefix)
	}
	if req.Embeddings != "" {
		arr, err := dataio.ReadArrayFS(env.InputFS(), req.Embeddings, dataio.ReadOptions{Key: req.EmbeddingsKey})
		if err != nil {
			return err
		}
		if arr.Rank() != 3 {
			return &fault.InputError{File: req.Embeddings, Msg: fmt.Sprintf("want a 3-D array (rows, samples, d), got shape %v", arr.Shape)}
		}
		if arr.Shape[0] != len(recs) {
			return &fault.InputError{File: req.Embeddings, Msg: fmt.Sprintf("%d rows of embeddings for %d rows in %s", arr.Shape[0], len(recs), req.In)}
		}
		for i, r := range recs {
			if len(r.Samples) == 0 {
				continue
			}
			if len(r.Samples) != arr.Shape[1] {
				return &fault.InputError{File: req.In, Line: r.Line, Field: "samples", Msg: fmt.Sprintf("%d samples, but %s has %d per row", len(r.Samples), req.Embeddings, arr.Shape[1])}
			}
			prompts[i].Embeddings = mat.NewDense(arr.Shape[1], arr.Shape[2], arr.Slice(i).Data)
		}
		return nil
	}
	d := -1
	for i, r := range recs {
		if len(r.Samples) == 0 && len(r.Embeddings) == 0 {
			continue
		}
		if len(r.Embeddings) == 0 {
			msg := fmt.Sprintf("missing; {kernel} %s needs one embedding per sample (or give {embeddings} E.npy)", req.Kernel)
			if defs, _ := req.scores(); !req.vectorKernel(simScores(defs)) {
				msg = "missing; the embedding similarity needs one embedding per sample (in the rows or an embeddings file)"
			}
			return &fault.InputError{File: req.In, Line: r.Line, Field: "embeddings", Msg: msg}
		}
		if len(r.Embeddings) != len(r.Samples) {
			return &fault.InputError{File: req.In, Line: r.Line, Field: "embeddings", Msg: fmt.Sprintf("%d embeddings for %d samples", len(r.Embeddings), len(r.Samples))}
		}
		if d < 0 {
			d = len(r.Embeddings[0])
		}
		m := mat.NewDense(len(r.Embeddings), d, nil)
		for j, v := range r.Embeddings {
			if len(v) != d {
				return &fault.InputError{File: req.In, Line: r.Line, Field: fmt.Sprintf("embeddings[%d]", j), Msg: fmt.Sprintf("has %d values, earlier rows have %d", len(v), d)}
			}
			m.SetRow(j, v)
		}
		prompts[i].Embeddings = m
	}
	return nil
}

// scoredEmbeddings returns the embedding rows the entropies are computed
// from (without each prompt's first sample under holdoutFirst), for the
// bandwidth rules: the held-out answer must not set the kernel that
// scores the others.
func scoredEmbeddings(prompts []uncertainty.Prompt, holdoutFirst bool) []*mat.Dense {
	var sets []*mat.Dense
	for _, p := range prompts {
		if p.Embeddings == nil {
			continue
		}
		n, d := p.Embeddings.Dims()
		switch {
		case !holdoutFirst:
			sets = append(sets, p.Embeddings)
		case n > 1:
			sets = append(sets, p.Embeddings.Slice(1, n, 0, d).(*mat.Dense))
		}
	}
	return sets
}
