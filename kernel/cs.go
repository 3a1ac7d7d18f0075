package kernel

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"
)

// CS is the normalised contiguous-subsequence kernel on token sequences
// (Gruber & Buettner, ICML 2024, Eq. 18-19):
//
//	k_t(x, y) = #{(i, j) : x[i:i+t] == y[j:j+t]}
//	k(x, y)   = k_t(x, y) / sqrt(k_t(x, x) k_t(y, y))
//
// k_t is the dot product of the t-gram count vectors, which is how it is
// computed here. With Cumulative set, the counts of all lengths 1..T are
// summed before normalising, as in the authors' code.
//
// A sequence shorter than T has no t-gram, so k_t is 0 with everything and
// the normalisation is 0/0. Such a sequence is treated as an atom: its
// similarity is 1 with an identical token sequence (two empty answers are
// identical) and 0 with anything else. The kernel stays positive
// semi-definite (every sequence maps to a unit vector: its normalised count
// vector, or an indicator of its exact tokens in a separate coordinate
// block) and k(x, x) = 1 always, so kernel entropy stays in [-1, 0].
type CS struct {
	T          int  // subsequence length; 0 means 2, the paper's choice
	Cumulative bool // sum lengths 1..T
}

func (k CS) String() string {
	if k.Cumulative {
		return fmt.Sprintf("cs(t=1..%d)", k.t())
	}
	return fmt.Sprintf("cs(t=%d)", k.t())
}

func (k CS) t() int {
	if k.T <= 0 {
		return 2
	}
	return k.T
}

// sparse is a normalised count vector: ids ascending, weights summing in
// square to 1.
type sparse struct {
	id []int
	w  []float64
}

// featurize maps every sequence to its normalised t-gram count vector,
// interning grams through vocab so vectors of one call share ids.
func (k CS) featurize(seqs [][]string) []sparse {
	vocab := map[string]int{}
	intern := func(key string) int {
		id, ok := vocab[key]
		if !ok {
			id = len(vocab)
			vocab[key] = id
		}
		return id
	}
	lo := k.t()
	if k.Cumulative {
		lo = 1
	}
	out := make([]sparse, len(seqs))
	var b strings.Builder
	for s, seq := range seqs {
		counts := map[int]float64{}
		for t := lo; t <= k.t(); t++ {
			for i := 0; i+t <= len(seq); i++ {
				b.Reset()
				b.WriteString(strconv.Itoa(t)) // length tag keeps 1-grams apart from 2-grams
				for _, tok := range seq[i : i+t] {
					b.WriteByte(0)
					b.WriteString(tok)
				}
				counts[intern(b.String())]++
			}
		}
		if len(counts) == 0 {
			// Atom: the exact token sequence, in a key space no gram uses.
			counts[intern("\x01"+strings.Join(seq, "\x00"))] = 1
		}
		v := sparse{id: make([]int, 0, len(counts)), w: make([]float64, 0, len(counts))}
		for id := range counts {
			v.id = append(v.id, id)
		}
		slices.Sort(v.id)
		var norm float64
		for _, id := range v.id {
			c := counts[id]
			norm += c * c
		}
		norm = math.Sqrt(norm)
		for _, id := range v.id {
			v.w = append(v.w, counts[id]/norm)
		}
		out[s] = v
	}
	return out
}

func dotSparse(a, b sparse) float64 {
	var s float64
	i, j := 0, 0
	for i < len(a.id) && j < len(b.id) {
		switch {
		case a.id[i] < b.id[j]:
			i++
		case a.id[i] > b.id[j]:
			j++
		default:
			s += a.w[i] * b.w[j]
			i++
			j++
		}
	}
	return s
}

// Gram returns the n×n kernel matrix of the sequences.
func (k CS) Gram(seqs [][]string) *mat.SymDense {
	f := k.featurize(seqs)
	n := len(seqs)
	g := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		g.SetSym(i, i, 1)
		for j := i + 1; j < n; j++ {
			g.SetSym(i, j, min(1, dotSparse(f[i], f[j])))
		}
	}
	return g
}

// Eval returns k(x, y).
func (k CS) Eval(x, y []string) float64 {
	return k.Gram([][]string{x, y}).At(0, 1)
}
