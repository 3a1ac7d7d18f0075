package kernel

import (
	"context"
	"fmt"
	"math"
	"slices"
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

// featurize maps every sequence to its normalised t-gram count vector.
// A t-gram is named by the id of its (t−1)-gram prefix and its last
// token, so each position costs one map entry per length, not a key of
// t tokens (a key of t tokens per position is quadratic in t: a 34 KB
// answer with t = 1000 asked for gigabytes). Vector ids are given in the
// order grams are first met (sequence, length, position).
func (k CS) featurize(seqs [][]string) []sparse {
	tokens := map[string]int{}
	type gram struct{ t, prefix, last int }
	grams := map[gram]int{} // t-gram → its id among grams of length t
	type key struct{ t, id int }
	vocab := map[key]int{}
	atoms := map[string]int{}
	next := 0
	lo := k.t()
	if k.Cumulative {
		lo = 1
	}
	out := make([]sparse, len(seqs))
	var level, tok []int
	for s, seq := range seqs {
		counts := map[int]float64{}
		tok = tok[:0]
		for _, w := range seq {
			id, ok := tokens[w]
			if !ok {
				id = len(tokens)
				tokens[w] = id
			}
			tok = append(tok, id)
		}
		// level[i] is the id of the t-gram at position i.
		level = append(level[:0], tok...)
		for t := 1; t <= k.t() && t <= len(seq); t++ {
			if t > 1 {
				for i := 0; i+t <= len(seq); i++ {
					g := gram{t, level[i], tok[i+t-1]}
					id, ok := grams[g]
					if !ok {
						id = len(grams)
						grams[g] = id
					}
					level[i] = id
				}
				level = level[:len(seq)-t+1]
			}
			if t < lo {
				continue
			}
			for _, id := range level {
				v, ok := vocab[key{t, id}]
				if !ok {
					v = next
					next++
					vocab[key{t, id}] = v
				}
				counts[v]++
			}
		}
		if len(counts) == 0 {
			// Atom: the exact token sequence, in a key space no gram uses.
			a := strings.Join(seq, "\x00")
			v, ok := atoms[a]
			if !ok {
				v = next
				next++
				atoms[a] = v
			}
			counts[v] = 1
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

// CostBytes is about what featurizing seqs holds at its peak: an entry
// for each position and each length up to T.
func (k CS) CostBytes(seqs [][]string) int64 {
	var words int64
	for _, s := range seqs {
		words += int64(len(s))
	}
	return words * int64(k.t()) * 96
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
	g, _ := k.GramContext(context.Background(), seqs)
	return g
}

// GramContext is Gram stopping, with ctx's error, within 64 pairs of
// sequences once ctx is done: thousands of long sequences are millions
// of pairs.
func (k CS) GramContext(ctx context.Context, seqs [][]string) (*mat.SymDense, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f := k.featurize(seqs)
	n := len(seqs)
	g := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		g.SetSym(i, i, 1)
		for j := i + 1; j < n; j++ {
			if (j-i)%64 == 1 {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
			}
			g.SetSym(i, j, min(1, dotSparse(f[i], f[j])))
		}
	}
	return g, nil
}

// Eval returns k(x, y).
func (k CS) Eval(x, y []string) float64 {
	return k.Gram([][]string{x, y}).At(0, 1)
}
