package uncertainty

import (
	"context"
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/internal/text/tokenize"
	"github.com/genlens/genlens/metric/evalstat"
	"github.com/genlens/genlens/network/nli"
)

// The inputs of the LM-Polygraph scores (Input's similarity and
// entailment fields) as both `genlens entropy` and the proxy build them
// from texts, so that one prompt's scores are the same whoever computes
// them.

// RougeTextSimilarity is the RougeL-F of the words of text with those of
// each of others: the similarity of the graph scores (RougeSimilarity),
// of one text with others.
func RougeTextSimilarity(text string, others []string) []float64 {
	a := tokenize.Words(text)
	out := make([]float64, len(others))
	for i, o := range others {
		out[i] = evalstat.RougeLF(a, tokenize.Words(o))
	}
	return out
}

// RougeSampleSimilarity is RougeSimilarity of the words of samples,
// stopping with ctx's error when ctx ends (see RougeSimilarityContext).
func RougeSampleSimilarity(ctx context.Context, samples []string) (*mat.SymDense, error) {
	words := make([][]string, len(samples))
	for k, s := range samples {
		words[k] = tokenize.Words(s)
	}
	return RougeSimilarityContext(ctx, words)
}

// EntailmentTextSimilarity is the entailment probability of the judge m,
// both ways and averaged, (P(entailment | a, b) + P(entailment | b, a)) / 2,
// of text with each of others as they are (no question before them).
func EntailmentTextSimilarity(ctx context.Context, m nli.Model, text string, others []string) ([]float64, error) {
	pairs := make([]nli.Pair, 0, 2*len(others))
	for _, o := range others {
		pairs = append(pairs, nli.Pair{Premise: text, Hypothesis: o}, nli.Pair{Premise: o, Hypothesis: text})
	}
	probs, err := m.Classify(ctx, pairs)
	if err == nil && len(probs) != len(pairs) {
		err = fmt.Errorf("%d judgements for %d pairs", len(probs), len(pairs))
	}
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(others))
	for i := range others {
		out[i] = (probs[2*i][nli.Entailment] + probs[2*i+1][nli.Entailment]) / 2
	}
	return out, nil
}

// JudgeAsk says which pairs of one prompt JudgeProbabilities asks.
type JudgeAsk struct {
	Samples  bool // the ordered pairs of distinct samples
	Diagonal bool // and each sample with itself
	Answer   bool // the answer under test with each sample
	Back     bool // and each sample with the answer under test
}

// Judged holds an entailment judge's label probabilities of one prompt's
// pairs, indexed by nli.Label; a field of pairs not asked is nil.
type Judged struct {
	// Samples[a][b] is of (sample a, sample b); the diagonal is
	// entailment 1 unless asked (JudgeAsk.Diagonal).
	Samples [][][3]float64
	// Answer[k] is of (answer under test, sample k), AnswerBack[k] of
	// (sample k, answer under test).
	Answer, AnswerBack [][3]float64
}

// AnswerSimilarity is the nli similarity of the answer under test with
// each sample: the entailment probability both ways, averaged, of the
// judgements of Answer and AnswerBack; nil unless both were asked.
func (j Judged) AnswerSimilarity() []float64 {
	if j.Answer == nil || j.AnswerBack == nil {
		return nil
	}
	out := make([]float64, len(j.Answer))
	for k := range out {
		out[k] = (j.Answer[k][nli.Entailment] + j.AnswerBack[k][nli.Entailment]) / 2
	}
	return out
}

// JudgeProbabilities asks m the label probabilities of the pairs ask
// names among samples and answer (nil: no answer under test, and no
// answer pairs), in one call, each text prefixed with question (unless it
// is "") as semantic.ClusterAnswers prefixes them, so that a caching
// judge is not asked again the pairs the clustering asked.
func JudgeProbabilities(ctx context.Context, m nli.Model, question string, samples []string, answer *string, ask JudgeAsk) (Judged, error) {
	text := func(s string) string {
		if question == "" {
			return s
		}
		return question + " " + s
	}
	n := len(samples)
	var pairs []nli.Pair
	if ask.Samples {
		for a := range n {
			for b := range n {
				if a != b || ask.Diagonal {
					pairs = append(pairs, nli.Pair{Premise: text(samples[a]), Hypothesis: text(samples[b])})
				}
			}
		}
	}
	withAnswer := (ask.Answer || ask.Back) && answer != nil
	if withAnswer {
		for _, s := range samples {
			if ask.Answer {
				pairs = append(pairs, nli.Pair{Premise: text(*answer), Hypothesis: text(s)})
			}
			if ask.Back {
				pairs = append(pairs, nli.Pair{Premise: text(s), Hypothesis: text(*answer)})
			}
		}
	}
	var out Judged
	if len(pairs) == 0 {
		return out, nil
	}
	probs, err := m.Classify(ctx, pairs)
	if err == nil && len(probs) != len(pairs) {
		err = fmt.Errorf("%d judgements for %d pairs", len(probs), len(pairs))
	}
	if err != nil {
		return out, err
	}
	if ask.Samples {
		out.Samples = make([][][3]float64, n)
		for a := range n {
			out.Samples[a] = make([][3]float64, n)
			out.Samples[a][a] = [3]float64{nli.Entailment: 1}
			for b := range n {
				if a != b || ask.Diagonal {
					out.Samples[a][b], probs = probs[0], probs[1:]
				}
			}
		}
	}
	if withAnswer {
		for range samples {
			if ask.Answer {
				out.Answer, probs = append(out.Answer, probs[0]), probs[1:]
			}
			if ask.Back {
				out.AnswerBack, probs = append(out.AnswerBack, probs[0]), probs[1:]
			}
		}
	}
	return out, nil
}

// JudgeAlternatives returns the tokens of CCP of cands: the judge m's
// label probabilities of each token's word against its alternatives'
// (CCPPairs, then CCPTokens). judgeErr is the judge's failure; err is
// CCPTokens' reason the tokens give no CCP.
func JudgeAlternatives(ctx context.Context, m nli.Model, cands []CCPCandidate) (toks []CCPToken, err, judgeErr error) {
	pairs := CCPPairs(cands)
	var probs [][3]float64
	if len(pairs) > 0 {
		if probs, judgeErr = m.Classify(ctx, pairs); judgeErr != nil {
			return nil, nil, judgeErr
		}
	}
	toks, err = CCPTokens(cands, probs)
	return toks, err, nil
}
