package uncertainty

import (
	"errors"
	"fmt"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/metric/likelihood"
	"github.com/genlens/genlens/metric/semantic"
)

// Def declares one score of sampled answers: the name users give it, the
// key of its value in JSON documents and CSV columns, and what it needs.
// The table of Defs is the one place a score is declared: the entropy
// command's keys, columns, AUROC and AUARC rows and the proxy's scores all
// read it.
type Def struct {
	Name  string // as users name it: "kernel-entropy", "se-discrete"
	Key   string // the JSON key and CSV column: "kernel_entropy"
	Label string // in tables read by people
	// Confidence marks a score that is higher for surer answers (lexical
	// similarity): an AUROC or a rejection order negates it.
	Confidence bool
	// Sim is the score of Evaluate this is, from the samples' similarity
	// matrix; "" for the others.
	Sim Score
	// Needs is what the score reads besides the samples' texts.
	Needs Needs
	// Value computes the score of one prompt from in; nil for the scores
	// of Evaluate and for p(True), which is one more question to the
	// model. An error is why the score is unavailable for that prompt.
	Value func(in Input) (float64, error)
}

// Needs is a set of the sources a score reads besides the samples' texts.
type Needs uint16

const (
	// NeedsSampleLogprobs: the token logprobs of every sample.
	NeedsSampleLogprobs Needs = 1 << iota
	// NeedsAnswerLogprobs: the token logprobs of the answer under test
	// (and, for mte, their top-K alternatives).
	NeedsAnswerLogprobs
	// NeedsJudge: the samples clustered by bidirectional entailment
	// (semantic.ClusterAnswers with an entailment judge).
	NeedsJudge
	// NeedsModel: a question to the model that sampled (p(True)).
	NeedsModel
	// NeedsSimilarity: the run's similarity (RougeL-F or embedding
	// cosine, as of the graph scores) of the answer under test with each
	// sample (AnswerSim) and of the samples with each other (SampleSim).
	NeedsSimilarity
	// NeedsEntailmentProbs: the entailment judge's label probabilities,
	// not only its labels, of the ordered pairs of samples (SampleNLI).
	NeedsEntailmentProbs
	// NeedsAnswerEntailmentProbs: the same of the answer under test with
	// each sample (AnswerNLI).
	NeedsAnswerEntailmentProbs
	// NeedsAnswerTokenSimilarity: the run's similarity of the answer
	// under test with itself without each of its tokens
	// (AnswerTokenSim; TokenSimilarities), which needs its tokens' texts.
	NeedsAnswerTokenSimilarity
	// NeedsSampleTokenSimilarity: the same of every sample
	// (SampleTokenSim).
	NeedsSampleTokenSimilarity
	// NeedsAlternativesEntailment: the answer under test's tokens with
	// their top-K alternatives' texts, and the entailment judge's label
	// probabilities between each token's word and its alternatives' (CCP;
	// CCPPairs, CCPTokens).
	NeedsAlternativesEntailment
	// NeedsQuestion: one more question of the score's own to the model
	// that sampled, whose replies the score reads (Replies).
	NeedsQuestion
)

// Input is what the scores with a Value read of one prompt. A field a
// score needs and its caller could not give is nil, or the error of its
// ...Err field says why.
type Input struct {
	Logprobs [][]likelihood.Token // of the samples; nil when unknown
	Answer   []likelihood.Token   // of the answer under test; nil when unknown
	Clusters []int                // the samples' clusters by bidirectional entailment
	Samples  []string             // the samples' texts

	// AnswerSim[k] is the similarity of the answer under test with sample
	// k, SampleSim the samples' m × m similarity matrix (NeedsSimilarity).
	AnswerSim []float64
	SampleSim mat.Matrix
	// SimErr says why AnswerSim or SampleSim is nil.
	SimErr error
	// SampleNLI[i][j] are the judge's label probabilities of (sample i,
	// sample j), AnswerNLI[k] of (answer under test, sample k), indexed
	// by nli.Label (NeedsEntailmentProbs, NeedsAnswerEntailmentProbs).
	SampleNLI [][][3]float64
	AnswerNLI [][3]float64
	// AnswerTokenSim[t] is the run's similarity of the answer under test
	// with itself without its token t, SampleTokenSim[i] the same of
	// sample i (NeedsAnswerTokenSimilarity, NeedsSampleTokenSimilarity);
	// TokenSimErr says why one is nil.
	AnswerTokenSim []float64
	SampleTokenSim [][]float64
	TokenSimErr    error
	// CCP holds the answer under test's tokens as CCP reads them
	// (NeedsAlternativesEntailment), or CCPErr why not.
	CCP    []CCPToken
	CCPErr error
	// Replies are the model's replies to the score's own question
	// (NeedsQuestion), or RepliesErr why there are none.
	Replies    []string
	RepliesErr error
}

var defs = []Def{
	{Name: "kernel-entropy", Key: "kernel_entropy", Label: "kernel entropy", Sim: ScoreKernelEntropy},
	{Name: "lexsim", Key: "lexical_similarity", Label: "lexical similarity", Confidence: true, Sim: ScoreLexSim},
	{Name: "kle", Key: "kle", Label: "kle", Sim: ScoreKLE},
	{Name: "eigv", Key: "eigv", Label: "eigv", Sim: ScoreEigV},
	{Name: "degree", Key: "degree", Label: "degree", Sim: ScoreDegree},
	{Name: "ecc", Key: "ecc", Label: "ecc", Sim: ScoreEcc},
	{Name: "pe", Key: "pe", Label: "pe", Needs: NeedsSampleLogprobs, Value: func(in Input) (float64, error) {
		return likelihood.PE(in.Logprobs)
	}},
	{Name: "ne", Key: "ne", Label: "ne", Needs: NeedsSampleLogprobs, Value: func(in Input) (float64, error) {
		return likelihood.NE(in.Logprobs)
	}},
	{Name: "msp", Key: "msp", Label: "msp", Needs: NeedsAnswerLogprobs, Value: answer(likelihood.MSP)},
	{Name: "perplexity", Key: "perplexity", Label: "perplexity", Needs: NeedsAnswerLogprobs, Value: answer(likelihood.Perplexity)},
	{Name: "mte", Key: "mte", Label: "mte", Needs: NeedsAnswerLogprobs, Value: answer(likelihood.MTE)},
	{Name: "se", Key: "se", Label: "se", Needs: NeedsJudge | NeedsSampleLogprobs, Value: func(in Input) (float64, error) {
		logp := make([]float64, len(in.Logprobs))
		for i, t := range in.Logprobs {
			lp, err := likelihood.Sequence(t)
			if err != nil {
				return 0, fmt.Errorf("sample %d: %w", i, err)
			}
			logp[i] = lp
		}
		return semantic.SE(in.Clusters, logp)
	}},
	{Name: "se-discrete", Key: "se_discrete", Label: "se-discrete", Needs: NeedsJudge, Value: func(in Input) (float64, error) {
		return semantic.SEDiscrete(in.Clusters)
	}},
	{Name: "numsets", Key: "numsets", Label: "numsets", Needs: NeedsJudge, Value: func(in Input) (float64, error) {
		return float64(semantic.NumSets(in.Clusters)), nil
	}},
	{Name: "ptrue", Key: "ptrue", Label: "p(True)", Needs: NeedsModel},
	// LM-Polygraph's black- and grey-box estimators (see polygraph.go).
	{Name: "label-prob", Key: "label_prob", Label: "label-prob", Needs: NeedsJudge, Value: func(in Input) (float64, error) {
		return LabelProb(in.Clusters)
	}},
	{Name: "cocoa-msp", Key: "cocoa_msp", Label: "cocoa-msp", Needs: NeedsAnswerLogprobs | NeedsSimilarity, Value: answerSim(CocoaMSP)},
	{Name: "cocoa-ppl", Key: "cocoa_ppl", Label: "cocoa-ppl", Needs: NeedsAnswerLogprobs | NeedsSimilarity, Value: answerSim(CocoaPPL)},
	{Name: "cocoa-mte", Key: "cocoa_mte", Label: "cocoa-mte", Needs: NeedsAnswerLogprobs | NeedsSimilarity, Value: answerSim(CocoaMTE)},
	{Name: "sentence-sar", Key: "sentence_sar", Label: "sentence-sar", Needs: NeedsSampleLogprobs | NeedsSimilarity, Value: func(in Input) (float64, error) {
		if in.SampleSim == nil {
			return 0, simErr(in.SimErr)
		}
		return SentenceSAR(in.Logprobs, in.SampleSim)
	}},
	{Name: "semantic-density", Key: "semantic_density", Label: "semantic density", Needs: NeedsSampleLogprobs | NeedsAnswerLogprobs | NeedsAnswerEntailmentProbs, Value: func(in Input) (float64, error) {
		if in.AnswerNLI == nil {
			return 0, errors.New("no judgement of the answer under test against the samples")
		}
		return SemanticDensity(in.Answer, in.Logprobs, in.Samples, in.AnswerNLI)
	}},
	{Name: "luq", Key: "luq", Label: "luq", Needs: NeedsEntailmentProbs, Value: func(in Input) (float64, error) {
		if in.SampleNLI == nil {
			return 0, errors.New("no judgement of the pairs of samples")
		}
		return LUQ(in.SampleNLI)
	}},
	{Name: "token-sar", Key: "token_sar", Label: "token-sar", Needs: NeedsAnswerLogprobs | NeedsAnswerTokenSimilarity, Value: func(in Input) (float64, error) {
		if in.AnswerTokenSim == nil {
			return 0, tokenSimErr(in.TokenSimErr)
		}
		return TokenSAR(in.Answer, in.AnswerTokenSim)
	}},
	{Name: "sar", Key: "sar", Label: "sar", Needs: NeedsSampleLogprobs | NeedsSimilarity | NeedsSampleTokenSimilarity, Value: func(in Input) (float64, error) {
		switch {
		case in.SampleSim == nil:
			return 0, simErr(in.SimErr)
		case in.SampleTokenSim == nil:
			return 0, tokenSimErr(in.TokenSimErr)
		}
		return SAR(in.Logprobs, in.SampleTokenSim, in.SampleSim)
	}},
	{Name: "ccp", Key: "ccp", Label: "ccp", Needs: NeedsAnswerLogprobs | NeedsAlternativesEntailment, Value: func(in Input) (float64, error) {
		if in.CCP == nil {
			if in.CCPErr == nil {
				return 0, errors.New("no judgement of the answer's tokens against their alternatives")
			}
			return 0, in.CCPErr
		}
		return CCP(in.CCP)
	}},
	// The model's replies to one more question (verbalized.go).
	{Name: "ptrue-empirical", Key: "ptrue_empirical", Label: "p(True) empirical", Needs: NeedsQuestion, Value: replies(PTrueEmpirical)},
	{Name: "verbalized-1s", Key: "verbalized_1s", Label: "verbalized 1S", Needs: NeedsQuestion, Value: reply(Verbalized)},
	{Name: "verbalized-2s", Key: "verbalized_2s", Label: "verbalized 2S", Needs: NeedsQuestion, Value: reply(Verbalized)},
	{Name: "linguistic-1s", Key: "linguistic_1s", Label: "linguistic 1S", Needs: NeedsQuestion, Value: reply(Linguistic)},
}

// replies is a score of the model's replies to its question.
func replies(f func([]string) (float64, error)) func(Input) (float64, error) {
	return func(in Input) (float64, error) {
		if in.Replies == nil {
			if in.RepliesErr != nil {
				return 0, in.RepliesErr
			}
			return 0, errors.New("no reply of the model to the score's question")
		}
		return f(in.Replies)
	}
}

// reply is a score of the model's one reply to its question.
func reply(f func(string) (float64, error)) func(Input) (float64, error) {
	return replies(func(r []string) (float64, error) {
		if len(r) != 1 {
			return 0, fmt.Errorf("%d replies of the model, want 1", len(r))
		}
		return f(r[0])
	})
}

// tokenSimErr is err, or why a token similarity is missing when the
// caller gave no reason.
func tokenSimErr(err error) error {
	if err == nil {
		return errors.New("no similarity of the answer with itself without each of its tokens")
	}
	return err
}

// answerSim is a score of the answer's tokens and its similarity with
// the samples.
func answerSim(f func([]likelihood.Token, []float64) (float64, error)) func(Input) (float64, error) {
	return func(in Input) (float64, error) {
		if in.AnswerSim == nil {
			return 0, simErr(in.SimErr)
		}
		return f(in.Answer, in.AnswerSim)
	}
}

// simErr is err, or ErrNoSimilarity when the caller gave no reason.
func simErr(err error) error {
	if err == nil {
		return ErrNoSimilarity
	}
	return err
}

func answer(f func([]likelihood.Token) (float64, error)) func(Input) (float64, error) {
	return func(in Input) (float64, error) { return f(in.Answer) }
}

// Defs returns the table of scores, in the order of the keys of a result
// and the columns of its CSV.
func Defs() []Def { return slices.Clone(defs) }

// Lookup returns the score called name.
func Lookup(name string) (Def, bool) {
	i := slices.IndexFunc(defs, func(d Def) bool { return d.Name == name })
	if i < 0 {
		return Def{}, false
	}
	return defs[i], true
}
