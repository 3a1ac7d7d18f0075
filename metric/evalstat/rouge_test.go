package evalstat

import (
	"math"
	"strings"
	"testing"
)

func TestRougeLF(t *testing.T) {
	for _, test := range []struct {
		a, b string // space-separated tokens
		want float64
	}{
		// LCS "the cat on the mat" = 5: 2*5/(6+5).
		{a: "the cat sat on the mat", b: "the cat on the mat", want: 10.0 / 11},
		{a: "a b c", b: "a b c", want: 1},
		{a: "a b c", b: "x y z", want: 0},
		{a: "a b c", b: "", want: 0},
		{a: "", b: "a", want: 0},
		{a: "", b: "", want: 0},
		// Subsequence, not substring: LCS of "a b c d" and "a x c y" is
		// "a c" = 2, so 2*2/8.
		{a: "a b c d", b: "a x c y", want: 0.5},
		// Order matters: LCS of "a b" and "b a" is 1, so 2/4.
		{a: "a b", b: "b a", want: 0.5},
		// Repeated tokens count once per match: LCS("a a a", "a") = 1.
		{a: "a a a", b: "a", want: 0.5},
		// LCS("a b c b d a b", "b d c a b a") = 4 (e.g. "b c b a"), 8/13.
		{a: "a b c b d a b", b: "b d c a b a", want: 8.0 / 13},
	} {
		a, b := strings.Fields(test.a), strings.Fields(test.b)
		if got := RougeLF(a, b); math.Abs(got-test.want) > tol {
			t.Errorf("RougeLF(%q, %q) = %v, want %v", test.a, test.b, got, test.want)
		}
		// The F-measure is symmetric.
		if got := RougeLF(b, a); math.Abs(got-test.want) > tol {
			t.Errorf("RougeLF(%q, %q) = %v, want %v", test.b, test.a, got, test.want)
		}
	}
}

func TestRougeLFText(t *testing.T) {
	for _, test := range []struct {
		a, b string
		want float64
	}{
		{a: "The cat sat on the mat.", b: "the cat, on the MAT", want: 10.0 / 11},
		{a: "Paris", b: "paris!", want: 1},
		{a: "Paris", b: "It is Paris.", want: 0.5},
		{a: "...", b: "Paris", want: 0},
		{a: "", b: "  ", want: 0},
	} {
		if got := RougeLFText(test.a, test.b); math.Abs(got-test.want) > tol {
			t.Errorf("RougeLFText(%q, %q) = %v, want %v", test.a, test.b, got, test.want)
		}
	}
}

func TestLexicalSimilarity(t *testing.T) {
	for _, test := range []struct {
		samples []string
		want    float64
	}{
		{samples: nil, want: math.NaN()},
		{samples: []string{"a b"}, want: math.NaN()},
		{samples: []string{"a b", "a b"}, want: 1},
		{samples: []string{"a", "b"}, want: 0},
		// Pairs: (0,1) = 1, (0,2) = 0, (1,2) = 0; mean 1/3.
		{samples: []string{"a b", "a b", "c"}, want: 1.0 / 3},
		// Pairs: (0,1) = 2*1/(2+1) = 2/3, (0,2) = 2*2/(2+3) = 4/5,
		// (1,2) = 2*1/(1+3) = 1/2; mean (2/3+4/5+1/2)/3 = 59/90.
		{samples: []string{"x y", "y", "x z y"}, want: 59.0 / 90},
		// Empty answers match nothing.
		{samples: []string{"", ""}, want: 0},
	} {
		s := make([][]string, len(test.samples))
		for i, v := range test.samples {
			s[i] = strings.Fields(v)
		}
		if got := LexicalSimilarity(s); !sameFloat(got, test.want) {
			t.Errorf("LexicalSimilarity(%q) = %v, want %v", test.samples, got, test.want)
		}
	}
}
