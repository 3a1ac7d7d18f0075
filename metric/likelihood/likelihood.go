package likelihood

import (
	"errors"
	"fmt"
	"math"
)

// ErrNoLogprobs is the reason a score is unavailable when an answer
// carries no token log-probabilities (the endpoint was not asked, or
// ignores the request).
var ErrNoLogprobs = errors.New("no token logprobs (ask with logprobs; the endpoint may ignore it)")

// ErrNoTop is the reason mean token entropy is unavailable when the
// tokens carry no top-K alternatives.
var ErrNoTop = errors.New("no top-K alternatives (ask with top_logprobs)")

// Token is one generated token's log-probability and the log-probabilities
// of the top-K alternatives the endpoint reported (the token itself
// usually among them).
type Token struct {
	Logprob float64
	Top     []float64
}

// Sequence returns log p(s), the sum of the token log-probabilities.
func Sequence(toks []Token) (float64, error) {
	if len(toks) == 0 {
		return 0, ErrNoLogprobs
	}
	var s float64
	for i, t := range toks {
		if math.IsNaN(t.Logprob) || math.IsInf(t.Logprob, 0) || t.Logprob > 0 {
			return 0, fmt.Errorf("token %d: logprob %v is not a log-probability", i, t.Logprob)
		}
		s += t.Logprob
	}
	return s, nil
}

// PE is the Monte Carlo predictive entropy −(1/m) Σᵢ log p(sᵢ) over the m
// sampled answers.
func PE(samples [][]Token) (float64, error) { return meanNegLog(samples, false) }

// NE is PE with each log p(sᵢ) divided by the token count of sᵢ (the
// length-normalised predictive entropy).
func NE(samples [][]Token) (float64, error) { return meanNegLog(samples, true) }

func meanNegLog(samples [][]Token, normalise bool) (float64, error) {
	if len(samples) == 0 {
		return 0, errors.New("no samples")
	}
	var s float64
	for i, toks := range samples {
		lp, err := Sequence(toks)
		if err != nil {
			return 0, fmt.Errorf("sample %d: %w", i, err)
		}
		if normalise {
			lp /= float64(len(toks))
		}
		s += lp
	}
	return -s / float64(len(samples)), nil
}

// MSP is 1 − p(s) of one answer s (the maximum sequence probability score
// when s is the greedy answer).
func MSP(toks []Token) (float64, error) {
	lp, err := Sequence(toks)
	if err != nil {
		return 0, err
	}
	return -math.Expm1(lp), nil
}

// Perplexity is exp(−mean token log-probability) of one answer.
func Perplexity(toks []Token) (float64, error) {
	lp, err := Sequence(toks)
	if err != nil {
		return 0, err
	}
	return math.Exp(-lp / float64(len(toks))), nil
}

// MTE is the mean over the answer's tokens of the entropy −Σ p log p of
// each token's top-K alternatives, renormalised to sum to one over the K.
// It is an approximation of the token entropy over the whole vocabulary:
// it leaves out the mass beyond the top K (renormalising spreads it over
// the K), so it is at most log K and reads low when the tail is heavy.
func MTE(toks []Token) (float64, error) {
	if len(toks) == 0 {
		return 0, ErrNoLogprobs
	}
	var s float64
	for i, t := range toks {
		if len(t.Top) == 0 {
			return 0, fmt.Errorf("token %d: %w", i, ErrNoTop)
		}
		m := math.Inf(-1)
		for _, l := range t.Top {
			if math.IsNaN(l) || math.IsInf(l, 0) || l > 0 {
				return 0, fmt.Errorf("token %d: top logprob %v is not a log-probability", i, l)
			}
			m = math.Max(m, l)
		}
		var z float64
		for _, l := range t.Top {
			z += math.Exp(l - m)
		}
		logZ := m + math.Log(z)
		var h float64
		for _, l := range t.Top {
			q := l - logZ
			h -= math.Exp(q) * q
		}
		s += h
	}
	return s / float64(len(toks)), nil
}
