package likelihood

import (
	"errors"
	"math"
	"testing"
)

func toks(lps ...float64) []Token {
	out := make([]Token, len(lps))
	for i, l := range lps {
		out[i] = Token{Logprob: l}
	}
	return out
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9 }

func TestScores(t *testing.T) {
	a := toks(-0.5, -1.5) // log p = -2, 2 tokens
	b := toks(-3)         // log p = -3, 1 token
	c := toks(-1, -1, -1) // log p = -3, 3 tokens
	for _, tc := range []struct {
		name string
		f    func() (float64, error)
		want float64
	}{
		{"pe identical", func() (float64, error) { return PE([][]Token{a, a, a}) }, 2},
		{"pe different", func() (float64, error) { return PE([][]Token{a, b, c}) }, (2 + 3 + 3) / 3.0},
		{"pe single", func() (float64, error) { return PE([][]Token{b}) }, 3},
		{"ne different", func() (float64, error) { return NE([][]Token{a, b, c}) }, (1 + 3 + 1) / 3.0},
		{"ne identical", func() (float64, error) { return NE([][]Token{c, c}) }, 1},
		{"msp", func() (float64, error) { return MSP(a) }, 1 - math.Exp(-2)},
		{"msp certain", func() (float64, error) { return MSP(toks(0, 0)) }, 0},
		{"perplexity", func() (float64, error) { return Perplexity(a) }, math.Exp(1)},
		{"perplexity single", func() (float64, error) { return Perplexity(b) }, math.Exp(3)},
		// Two equally likely alternatives: log 2 whatever their mass (renormalised).
		{"mte uniform pair", func() (float64, error) {
			return MTE([]Token{{Logprob: -2, Top: []float64{-2, -2}}, {Logprob: -0.1, Top: []float64{-0.1, -0.1}}})
		}, math.Log(2)},
		// p ∝ (3/4, 1/4) and a sure token: (H(3/4,1/4) + 0) / 2.
		{"mte", func() (float64, error) {
			return MTE([]Token{{Logprob: math.Log(0.6), Top: []float64{math.Log(0.6), math.Log(0.2)}}, {Logprob: 0, Top: []float64{0}}})
		}, -(0.75*math.Log(0.75) + 0.25*math.Log(0.25)) / 2},
	} {
		got, err := tc.f()
		if err != nil || !near(got, tc.want) {
			t.Errorf("%s = %.12g, %v; want %.12g", tc.name, got, err, tc.want)
		}
	}
}

func TestUnavailable(t *testing.T) {
	if _, err := PE([][]Token{toks(-1), nil}); !errors.Is(err, ErrNoLogprobs) {
		t.Errorf("PE without logprobs: %v", err)
	}
	if _, err := MSP(nil); !errors.Is(err, ErrNoLogprobs) {
		t.Errorf("MSP without logprobs: %v", err)
	}
	if _, err := MTE(toks(-1)); !errors.Is(err, ErrNoTop) {
		t.Errorf("MTE without top-K: %v", err)
	}
	if _, err := Perplexity(toks(0.5)); err == nil {
		t.Error("positive logprob accepted")
	}
	if _, err := NE(nil); err == nil {
		t.Error("no samples accepted")
	}
}
