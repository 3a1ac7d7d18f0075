package kernel

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func toks(s string) []string { return strings.Fields(s) }

func TestCSHandComputed(t *testing.T) {
	cases := []struct {
		name string
		k    CS
		x, y string
		want float64
	}{
		// x bigrams: ab ×2, ba ×1; y: ab, bc. k_t(x,y) = 2·1 = 2,
		// k_t(x,x) = 2²+1² = 5, k_t(y,y) = 2 -> 2/sqrt(10).
		{"repeated bigram", CS{T: 2}, "a b a b", "a b c", 2 / math.Sqrt(10)},
		{"identical", CS{T: 2}, "the capital of france", "the capital of france", 1},
		{"disjoint", CS{T: 2}, "a b", "c d", 0},
		{"same words other order", CS{T: 2}, "a b", "b a", 0},
		{"t=1 counts words", CS{T: 1}, "a b", "b a", 1},
		// Trigrams: x: abc, bcd; y: abc -> 1/sqrt(2).
		{"t=3", CS{T: 3}, "a b c d", "a b c", 1 / math.Sqrt(2)},
		// Short sequences are atoms: equal to an identical sequence only.
		{"short equal", CS{T: 2}, "paris", "paris", 1},
		{"short different", CS{T: 2}, "paris", "london", 0},
		{"short vs long", CS{T: 2}, "paris", "paris france", 0},
		{"both empty", CS{T: 2}, "", "", 1},
		{"empty vs word", CS{T: 2}, "", "paris", 0},
		{"empty vs long", CS{T: 2}, "", "a b c", 0},
		// Cumulative t=1..2: x = {a, b, ab}, y = {a, c, ac}: 1/3.
		{"cumulative", CS{T: 2, Cumulative: true}, "a b", "a c", 1.0 / 3},
		{"cumulative single word", CS{T: 2, Cumulative: true}, "paris", "paris france", 1 / math.Sqrt(3)},
		{"default t is 2", CS{}, "a b a b", "a b c", 2 / math.Sqrt(10)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := c.k.Eval(toks(c.x), toks(c.y))
			if math.Abs(got-c.want) > 1e-15 {
				t.Errorf("k(%q, %q) = %v, want %v", c.x, c.y, got, c.want)
			}
			if back := c.k.Eval(toks(c.y), toks(c.x)); back != got {
				t.Errorf("not symmetric: %v vs %v", got, back)
			}
		})
	}
}

func TestCSGramIsPSD(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	words := []string{"a", "b", "c", "d"}
	var seqs [][]string
	for i := 0; i < 40; i++ {
		n := r.IntN(5) // 0..4 tokens: plenty of empty and one-word sequences
		var s []string
		for j := 0; j < n; j++ {
			s = append(s, words[r.IntN(len(words))])
		}
		seqs = append(seqs, s)
	}
	for _, k := range []CS{{T: 2}, {T: 3}, {T: 2, Cumulative: true}} {
		g := k.Gram(seqs)
		var eig mat.EigenSym
		if !eig.Factorize(g, false) {
			t.Fatal("eigendecomposition failed")
		}
		for _, v := range eig.Values(nil) {
			if v < -1e-10 {
				t.Errorf("%v: eigenvalue %v < 0", k, v)
			}
		}
		for i := range seqs {
			if g.At(i, i) != 1 {
				t.Errorf("%v: k(x,x) = %v for %q", k, g.At(i, i), seqs[i])
			}
		}
	}
}
