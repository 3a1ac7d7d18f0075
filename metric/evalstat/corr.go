package evalstat

import (
	"cmp"
	"errors"
	"math"
	"slices"
)

// Pearson returns the Pearson product-moment correlation of x and y.
//
// It returns an error if the lengths differ, if there are fewer than two
// observations, if any value is NaN, or if either variable is constant: the
// correlation is then 0/0, and reporting an error rather than NaN makes a
// degenerate evaluation visible instead of silently propagating.
func Pearson(x, y []float64) (float64, error) {
	if len(x) != len(y) {
		return math.NaN(), errors.New("evalstat: Pearson: length mismatch")
	}
	if len(x) < 2 {
		return math.NaN(), errors.New("evalstat: Pearson: fewer than two observations")
	}
	if hasNaN(x) || hasNaN(y) {
		return math.NaN(), errors.New("evalstat: Pearson: NaN value")
	}
	// Test constancy directly: a computed mean of identical values need
	// not equal them exactly, so a centred sum of squares can be a tiny
	// non-zero number for a constant input.
	if isConstant(x) || isConstant(y) {
		return math.NaN(), errors.New("evalstat: Pearson: zero variance")
	}
	// Two-pass (centred) sums avoid the cancellation of the one-pass
	// sum(xy) - n mean(x) mean(y) form.
	mx, my := Mean(x), Mean(y)
	var sxy, sxx, syy float64
	for i := range x {
		dx, dy := x[i]-mx, y[i]-my
		sxy += dx * dy
		sxx += dx * dx
		syy += dy * dy
	}
	r := sxy / math.Sqrt(sxx*syy)
	// Rounding can push |r| marginally above 1; clamp as scipy does.
	return math.Max(-1, math.Min(1, r)), nil
}

// Spearman returns Spearman's rank correlation of x and y: the Pearson
// correlation of their average ranks, as scipy.stats.spearmanr. Errors are
// those of Pearson; a variable whose values are all tied has zero rank
// variance.
func Spearman(x, y []float64) (float64, error) {
	if len(x) != len(y) {
		return math.NaN(), errors.New("evalstat: Spearman: length mismatch")
	}
	if hasNaN(x) || hasNaN(y) {
		return math.NaN(), errors.New("evalstat: Spearman: NaN value")
	}
	return Pearson(Ranks(x), Ranks(y))
}

// Ranks returns the 1-based ranks of x, giving tied values the average of
// the ranks they span, as scipy.stats.rankdata with method "average". For
// example the ranks of [10 20 10 30] are [1.5 3 1.5 4].
//
// If x contains a NaN every rank is NaN, matching rankdata's default
// "propagate" policy: there is no meaningful place for NaN in the order.
// x is not modified.
func Ranks(x []float64) []float64 {
	r := make([]float64, len(x))
	if hasNaN(x) {
		for i := range r {
			r[i] = math.NaN()
		}
		return r
	}
	idx := make([]int, len(x))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return cmp.Compare(x[a], x[b]) })
	for i := 0; i < len(idx); {
		j := i + 1
		for j < len(idx) && x[idx[j]] == x[idx[i]] {
			j++
		}
		// Positions i..j-1 (0-based) hold equal values; their 1-based
		// ranks i+1..j average to (i+1+j)/2.
		avg := float64(i+1+j) / 2
		for k := i; k < j; k++ {
			r[idx[k]] = avg
		}
		i = j
	}
	return r
}

func hasNaN(x []float64) bool {
	for _, v := range x {
		if math.IsNaN(v) {
			return true
		}
	}
	return false
}

func isConstant(x []float64) bool {
	for _, v := range x[1:] {
		if v != x[0] {
			return false
		}
	}
	return true
}
