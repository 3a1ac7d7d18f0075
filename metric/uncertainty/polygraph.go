package uncertainty

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/metric/likelihood"
	"github.com/genlens/genlens/metric/semantic"
	"github.com/genlens/genlens/network/nli"
)

// The estimators below compute, from the same statistics, what the classes
// of the same name of LM-Polygraph (Fadeeva et al., "LM-Polygraph:
// Uncertainty Estimation for Language Models", EMNLP 2023 System
// Demonstrations; github IINemo/lm-polygraph) compute, including where
// their definition departs from the paper it cites; each says so. All grow
// with uncertainty.

// ErrNoSimilarity is the reason a score is unavailable when the run has no
// similarity of the answer under test with the samples.
var ErrNoSimilarity = errors.New("no similarity of the answer under test with the samples")

// LabelProb is 1 − (size of the largest cluster) / (number of samples):
// one minus the share of the samples in the most frequent meaning, as
// LM-Polygraph's LabelProb computes it from the bidirectional-entailment
// classes.
func LabelProb(clusters []int) (float64, error) {
	if len(clusters) == 0 {
		return 0, errors.New("no samples")
	}
	size := make([]int, semantic.NumSets(clusters))
	largest := 0
	for _, c := range clusters {
		size[c]++
		largest = max(largest, size[c])
	}
	return 1 - float64(largest)/float64(len(clusters)), nil
}

// meanDissimilarity is the mean of 1 − sim over the samples.
func meanDissimilarity(sim []float64) (float64, error) {
	if len(sim) == 0 {
		return 0, ErrNoSimilarity
	}
	var s float64
	for i, v := range sim {
		if math.IsNaN(v) {
			return 0, fmt.Errorf("similarity %d is NaN", i)
		}
		s += 1 - v
	}
	return s / float64(len(sim)), nil
}

// CocoaMSP is −log p(answer) × the mean over the samples of 1 − sim(answer,
// sample): the CoCoA score of Vashurin et al., "Uncertainty Quantification
// for LLMs through Minimum Bayes Risk: Bridging Confidence and
// Consistency" (2025), with the maximum sequence probability, as
// LM-Polygraph's CocoaMSP computes it. sim holds the similarity of the
// answer under test with each sample.
func CocoaMSP(answer []likelihood.Token, sim []float64) (float64, error) {
	lp, err := likelihood.Sequence(answer)
	if err != nil {
		return 0, err
	}
	d, err := meanDissimilarity(sim)
	if err != nil {
		return 0, err
	}
	return -lp * d, nil
}

// CocoaPPL is CocoaMSP with the log perplexity −(1/n) Σ log p(tokenᵢ) of
// the answer in place of −log p(answer), as LM-Polygraph's CocoaPPL.
func CocoaPPL(answer []likelihood.Token, sim []float64) (float64, error) {
	lp, err := likelihood.Sequence(answer)
	if err != nil {
		return 0, err
	}
	d, err := meanDissimilarity(sim)
	if err != nil {
		return 0, err
	}
	return -lp / float64(len(answer)) * d, nil
}

// CocoaMTE is CocoaMSP with the mean token entropy of the answer
// (likelihood.MTE: over its top-K alternatives, renormalised) in place of
// −log p(answer), as LM-Polygraph's CocoaMTE with its entropy statistic
// over the same K alternatives renormalised.
func CocoaMTE(answer []likelihood.Token, sim []float64) (float64, error) {
	h, err := likelihood.MTE(answer)
	if err != nil {
		return 0, err
	}
	d, err := meanDissimilarity(sim)
	if err != nil {
		return 0, err
	}
	return h * d, nil
}

// SARTemperature is the temperature t of SAR and SentenceSAR: the
// relevance-weighted probabilities of the other samples are divided by it.
// LM-Polygraph fixes it at 0.001, as do Duan et al.
const SARTemperature = 0.001

// SingleTokenRelevanceSimilarity is the similarity LM-Polygraph gives an
// answer of one token (or none) with itself without that token: its
// relevance 1 − 0.5.
const SingleTokenRelevanceSimilarity = 0.5

// sentenceSAR is −(1/m) Σᵢ log(pᵢ + (1/t) Σ_{j≠i} sim(i, j) pⱼ).
func sentenceSAR(p []float64, sim mat.Matrix) (float64, error) {
	m := len(p)
	if m == 0 {
		return 0, errors.New("no samples")
	}
	if r, c := sim.Dims(); r != m || c != m {
		return 0, fmt.Errorf("a %d × %d similarity matrix for %d samples", r, c, m)
	}
	var e float64
	for i := range m {
		var rel float64
		for j := range m {
			if j != i {
				rel += p[j] * sim.At(i, j)
			}
		}
		e -= math.Log(rel/SARTemperature + p[i])
	}
	return e / float64(m), nil
}

// SentenceSAR is the sentence-level relevance-shifted uncertainty of Duan
// et al., "Shifting Attention to Relevance: Towards the Predictive
// Uncertainty Quantification of Free-Form Large Language Models" (ACL
// 2024): −(1/m) Σᵢ log(p(sᵢ) + (1/t) Σ_{j≠i} sim(sᵢ, sⱼ) p(sⱼ)) with t =
// SARTemperature, as LM-Polygraph's SentenceSAR computes it. sim is the
// m × m similarity of the samples (its diagonal is not read).
func SentenceSAR(samples [][]likelihood.Token, sim mat.Matrix) (float64, error) {
	p := make([]float64, len(samples))
	for i, s := range samples {
		lp, err := likelihood.Sequence(s)
		if err != nil {
			return 0, fmt.Errorf("sample %d: %w", i, err)
		}
		p[i] = math.Exp(lp)
	}
	return sentenceSAR(p, sim)
}

// tokenSAR is Σₜ −log p(tokenₜ) × Rₜ / Σ R, Rₜ = 1 − tokenSim[t].
func tokenSAR(toks []likelihood.Token, tokenSim []float64) (float64, error) {
	if _, err := likelihood.Sequence(toks); err != nil {
		return 0, err
	}
	if len(tokenSim) != len(toks) {
		return 0, fmt.Errorf("%d token relevances for %d tokens", len(tokenSim), len(toks))
	}
	var z float64
	for _, s := range tokenSim {
		z += 1 - s
	}
	if z == 0 || math.IsNaN(z) {
		// LM-Polygraph divides by this sum: 0/0, NaN.
		return 0, errors.New("no token is relevant (every token's removal leaves the answer as similar as it was)")
	}
	var e float64
	for t, tok := range toks {
		e -= tok.Logprob * ((1 - tokenSim[t]) / z)
	}
	return e, nil
}

// TokenSAR is the token-level relevance-shifted uncertainty of Duan et
// al. (ACL 2024): Σₜ −log p(tokenₜ) Rₜ / Σ R of the answer under test,
// where the relevance Rₜ = 1 − tokenSim[t] and tokenSim[t] is the
// similarity of the answer with the answer without its token t, as
// LM-Polygraph's TokenSAR computes it.
func TokenSAR(answer []likelihood.Token, tokenSim []float64) (float64, error) {
	return tokenSAR(answer, tokenSim)
}

// SAR is SentenceSAR with each p(sᵢ) replaced by exp(−TokenSAR(sᵢ)), the
// relevance-weighted sequence probability, as LM-Polygraph's SAR computes
// it. tokenSim holds each sample's token similarities (see TokenSAR).
func SAR(samples [][]likelihood.Token, tokenSim [][]float64, sim mat.Matrix) (float64, error) {
	if len(tokenSim) != len(samples) {
		return 0, fmt.Errorf("token relevances of %d samples for %d samples", len(tokenSim), len(samples))
	}
	p := make([]float64, len(samples))
	for i, s := range samples {
		e, err := tokenSAR(s, tokenSim[i])
		if err != nil {
			return 0, fmt.Errorf("sample %d: %w", i, err)
		}
		p[i] = math.Exp(-e)
	}
	return sentenceSAR(p, sim)
}

// SemanticDensity is the semantic density of Qiu & Miikkulainen,
// "Semantic Density: Uncertainty Quantification for Large Language Models
// through Confidence Measurement in Semantic Space" (NeurIPS 2024),
// negated, as LM-Polygraph's SemanticDensity computes it: over the
// distinct sample texts (each counted once, at its first occurrence) and
// the answer under test,
//
//	−(Σₖ p̄ₖ K(answer, sₖ) + p̄) / (Σₖ p̄ₖ + p̄),
//
// where p̄ = p(s)^(1/|s|) is the length-normalised probability
// (computed as LM-Polygraph does, p(s) first: a sample whose p(s)
// underflows to 0 gets weight 0), K = 1 − (P(contradiction) +
// P(neutral)/2) of the entailment judge with the answer as premise and
// the sample as hypothesis, and the answer's own kernel is 1. answerNLI[k]
// holds the judge's label probabilities of (answer, sample k), indexed by
// nli.Label.
func SemanticDensity(answer []likelihood.Token, samples [][]likelihood.Token, texts []string, answerNLI [][3]float64) (float64, error) {
	if len(texts) != len(samples) || len(answerNLI) != len(samples) {
		return 0, fmt.Errorf("%d texts and %d judgements for %d samples", len(texts), len(answerNLI), len(samples))
	}
	normed := func(toks []likelihood.Token) (float64, error) {
		lp, err := likelihood.Sequence(toks)
		if err != nil {
			return 0, err
		}
		return math.Pow(math.Exp(lp), 1/float64(len(toks))), nil
	}
	g, err := normed(answer)
	if err != nil {
		return 0, fmt.Errorf("answer: %w", err)
	}
	num, den := g, g
	seen := map[string]bool{}
	for k, s := range samples {
		if seen[texts[k]] {
			continue
		}
		seen[texts[k]] = true
		p, err := normed(s)
		if err != nil {
			return 0, fmt.Errorf("sample %d: %w", k, err)
		}
		d := answerNLI[k][nli.Contradiction] + answerNLI[k][nli.Neutral]/2
		if d <= 1 {
			num += p * (1 - d)
		}
		den += p
	}
	return -num / den, nil
}

// LUQ is the uncertainty of Zhang et al., "LUQ: Long-text Uncertainty
// Quantification for LLMs" (EMNLP 2024), in the basic form LM-Polygraph's
// LUQ computes (whole answers, no sentence splitting): 1 − the mean over
// ordered pairs of distinct samples (i, j) of P(entailment) /
// (P(entailment) + P(contradiction)) of the judge with sample i as
// premise and j as hypothesis. LM-Polygraph takes the two logits' softmax,
// exp(lₑ)/(exp(lₑ)+exp(l_c)), which is the same ratio of the label
// probabilities. probs[i][j] holds the judge's label probabilities of
// (sample i, sample j), indexed by nli.Label; the diagonal is not read.
//
// A judge that answers with one label (a chat judge without logprobs)
// gives a neutral pair entailment and contradiction probability 0, where
// LM-Polygraph's
// ratio is 0/0, NaN. Such a pair counts 1/2 here: the limit of the ratio
// for a judge whose logits are 0 for its label and −L for the others as L
// grows, since the two logits are then equal.
func LUQ(probs [][][3]float64) (float64, error) {
	m := len(probs)
	if m < 2 {
		return 0, fmt.Errorf("%d samples; LUQ needs at least 2", m)
	}
	var s float64
	for i := range m {
		if len(probs[i]) != m {
			return 0, fmt.Errorf("row %d has %d judgements for %d samples", i, len(probs[i]), m)
		}
		var row float64
		for j := range m {
			if j == i {
				continue
			}
			e, c := probs[i][j][nli.Entailment], probs[i][j][nli.Contradiction]
			if e+c == 0 {
				row += 0.5
				continue
			}
			row += e / (e + c)
		}
		s += row / float64(m-1)
	}
	return 1 - s/float64(m), nil
}

// CCPToken is one token of the answer under test for CCP: its
// log-probability and its alternatives', and the entailment judge's
// label probabilities between its word and each alternative's.
type CCPToken struct {
	// Logprobs holds the token's log-probability first, then its
	// alternatives' (the endpoint's top-K without the token itself).
	Logprobs []float64
	// Forward[i] is the judgement of (the token's word, alternative i's
	// word), Backward[i] of (alternative i's word, the token's word),
	// indexed by nli.Label; entry 0, the token with itself, is not read.
	Forward, Backward [][3]float64
}

// ccpLabel is LM-Polygraph's class of a judgement: the most probable of
// entail, contra, neutral, ties to the first in that order.
func ccpLabel(p [3]float64) nli.Label {
	best := nli.Entailment
	for _, l := range []nli.Label{nli.Contradiction, nli.Neutral} {
		if p[l] > p[best] {
			best = l
		}
	}
	return best
}

// ccpCombine joins the classes of both directions as LM-Polygraph's
// ClaimConditionedProbability does: equal classes stand; entailment one
// way and contradiction the other is neutral; otherwise entailment or
// contradiction, whichever is there, else neutral.
func ccpCombine(f, b nli.Label) nli.Label {
	switch {
	case f == b:
		return f
	case (f == nli.Entailment && b == nli.Contradiction) || (f == nli.Contradiction && b == nli.Entailment):
		return nli.Neutral
	case f == nli.Entailment || b == nli.Entailment:
		return nli.Entailment
	case f == nli.Contradiction || b == nli.Contradiction:
		return nli.Contradiction
	}
	return nli.Neutral
}

// CCP is the claim-conditioned probability of Fadeeva et al.,
// "Fact-Checking the Output of Large Language Models via Token-Level
// Uncertainty Quantification" (Findings of ACL 2024), over the whole
// answer, negated, as LM-Polygraph's ClaimConditionedProbability
// computes it: −Πₜ Σ_{a entails} p(a) / Σ_{a entails or contradicts} p(a)
// over each token's alternatives a (the token itself always entails; an
// alternative neutral to it is left out).
func CCP(tokens []CCPToken) (float64, error) {
	if len(tokens) == 0 {
		return 0, likelihood.ErrNoLogprobs
	}
	var sum float64
	for t, tok := range tokens {
		n := len(tok.Logprobs)
		if n == 0 || len(tok.Forward) != n || len(tok.Backward) != n {
			return 0, fmt.Errorf("token %d: %d alternatives, %d and %d judgements", t, n, len(tok.Forward), len(tok.Backward))
		}
		var entail, all []float64
		for i, lp := range tok.Logprobs {
			if math.IsNaN(lp) || lp > 0 {
				return 0, fmt.Errorf("token %d: alternative %d: logprob %v is not a log-probability", t, i, lp)
			}
			c := nli.Neutral
			if i > 0 {
				c = ccpCombine(ccpLabel(tok.Forward[i]), ccpLabel(tok.Backward[i]))
			}
			switch {
			case i == 0 || c == nli.Entailment:
				entail = append(entail, lp)
				all = append(all, lp)
			case c == nli.Contradiction:
				all = append(all, lp)
			}
		}
		sum += logSumExp(entail) - logSumExp(all)
	}
	return -math.Exp(sum), nil
}

func logSumExp(x []float64) float64 {
	m := math.Inf(-1)
	for _, v := range x {
		m = math.Max(m, v)
	}
	if math.IsInf(m, -1) {
		return m
	}
	var s float64
	for _, v := range x {
		s += math.Exp(v - m)
	}
	return m + math.Log(s)
}

// CCPWord is the word of a token as LM-Polygraph's alternatives' judge
// sees it: the token without ASCII punctuation, spaces and newlines at
// either end. A token whose word is empty (punctuation only) is skipped
// by CCP as the token under test and as an alternative.
func CCPWord(token string) string {
	return strings.Trim(token, "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~ \n")
}

// TokenSimilarities is the similarity of an answer, whose tokens' texts
// are tokens, with itself without each of its tokens, as LM-Polygraph's
// cross-encoder calculator forms it for TokenSAR and SAR: the answer is
// the concatenation of its tokens (the endpoint's texts of them, as its
// tokenizer decodes them), and entry t is sim(answer, the concatenation
// of the tokens but t). An answer of one token, or none, has
// SingleTokenRelevanceSimilarity for each, as LM-Polygraph gives it, and
// sim is not called. sim is the run's similarity of the answer with each
// text of without, in one call so that it can batch them; its error is
// returned.
func TokenSimilarities(tokens []string, sim func(answer string, without []string) ([]float64, error)) ([]float64, error) {
	if len(tokens) <= 1 {
		out := make([]float64, len(tokens))
		for t := range out {
			out[t] = SingleTokenRelevanceSimilarity
		}
		return out, nil
	}
	full := strings.Join(tokens, "")
	without := make([]string, len(tokens))
	var b strings.Builder
	for t := range tokens {
		b.Reset()
		for u, s := range tokens {
			if u != t {
				b.WriteString(s)
			}
		}
		without[t] = b.String()
	}
	out, err := sim(full, without)
	if err == nil && len(out) != len(tokens) {
		err = fmt.Errorf("%d similarities for %d texts", len(out), len(tokens))
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// CCPCandidate is one token of the answer under test as CCP reads it:
// its text and log-probability, and the endpoint's top-K alternatives at
// its place.
type CCPCandidate struct {
	Text         string
	Logprob      float64
	Alternatives []Alternative
}

// Alternative is one of the top-K alternatives of a token.
type Alternative struct {
	Text    string
	Logprob float64
}

// ccpWords returns the words CCP judges at one token, the token's first
// and then its alternatives', with the alternatives' log-probabilities:
// as LM-Polygraph's black-box calculator lists them, the alternatives
// whose text is the token's are the token itself and dropped; and, as
// genlens adds, an alternative whose word (CCPWord) is empty, punctuation
// only, is dropped too. ok is false for a token whose own word is empty,
// which CCP skips.
func ccpWords(c CCPCandidate) (words []string, logprobs []float64, ok bool) {
	w := CCPWord(c.Text)
	if w == "" {
		return nil, nil, false
	}
	words, logprobs = []string{w}, []float64{c.Logprob}
	for _, a := range c.Alternatives {
		aw := CCPWord(a.Text)
		if a.Text == c.Text || aw == "" {
			continue
		}
		words = append(words, aw)
		logprobs = append(logprobs, a.Logprob)
	}
	return words, logprobs, true
}

// CCPPairs lists the ordered pairs of words the entailment judge is
// asked for CCP of the answer tokens: for each token CCP reads (see
// CCPTokens), (its word, the alternative's word) and (the alternative's
// word, its word) for each of its alternatives, in that order. The words
// are judged alone, without the question, as LM-Polygraph's calculator
// judges them.
func CCPPairs(tokens []CCPCandidate) []nli.Pair {
	var pairs []nli.Pair
	for _, c := range tokens {
		words, _, ok := ccpWords(c)
		if !ok {
			continue
		}
		for _, w := range words[1:] {
			pairs = append(pairs, nli.Pair{Premise: words[0], Hypothesis: w}, nli.Pair{Premise: w, Hypothesis: words[0]})
		}
	}
	return pairs
}

// ErrCCPPunctuation is why CCP cannot score an answer whose every token
// is punctuation only.
var ErrCCPPunctuation = errors.New("every token of the answer is punctuation, which CCP skips")

// CCPTokens returns the tokens of CCP from the answer's tokens and the
// judge's label probabilities of the pairs of CCPPairs, in its order. A
// token whose word is empty (punctuation only) is skipped, and so is such
// an alternative; the token itself among its alternatives is dropped.
func CCPTokens(tokens []CCPCandidate, judged [][3]float64) ([]CCPToken, error) {
	if len(tokens) == 0 {
		return nil, likelihood.ErrNoLogprobs
	}
	var out []CCPToken
	for _, c := range tokens {
		words, logprobs, ok := ccpWords(c)
		if !ok {
			continue
		}
		n := len(words)
		if len(judged) < 2*(n-1) {
			return nil, fmt.Errorf("%d judgements for the pairs of CCPPairs, fewer than asked", len(judged))
		}
		tok := CCPToken{Logprobs: logprobs, Forward: make([][3]float64, n), Backward: make([][3]float64, n)}
		tok.Forward[0], tok.Backward[0] = [3]float64{nli.Entailment: 1}, [3]float64{nli.Entailment: 1}
		for i := 1; i < n; i++ {
			tok.Forward[i], tok.Backward[i] = judged[0], judged[1]
			judged = judged[2:]
		}
		out = append(out, tok)
	}
	if len(judged) > 0 {
		return nil, fmt.Errorf("%d judgements more than the pairs of CCPPairs", len(judged))
	}
	if len(out) == 0 {
		return nil, ErrCCPPunctuation
	}
	return out, nil
}
