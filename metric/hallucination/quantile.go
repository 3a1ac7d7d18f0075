package hallucination

import (
	"math"
	"slices"
)

// QuantileRank returns k = ⌈εn⌉, clamped to [1, n]: the ε-quantile of a
// sample of n values is its k-th smallest value (see the package
// documentation). εn is rounded to nine decimals first, so that products
// such as 0.05 x 2000, which binary floating point puts a hair above 100,
// give 100.
func QuantileRank(n int, eps float64) int {
	t := eps * float64(n)
	k := int(math.Ceil(math.Round(t*1e9) / 1e9))
	return min(max(k, 1), n)
}

// Quantile returns the ε-quantile of s under the package convention: the
// ⌈εn⌉-th smallest of its n values, the smallest q with at least εn values
// <= q. s is not modified. Quantile returns NaN for an empty s.
func Quantile(s []float64, eps float64) float64 {
	if len(s) == 0 {
		return math.NaN()
	}
	c := slices.Clone(s)
	return kthSmallest(c, QuantileRank(len(c), eps))
}

// countBelow returns how many values of s are strictly below q.
func countBelow(s []float64, q float64) int {
	n := 0
	for _, v := range s {
		if v < q {
			n++
		}
	}
	return n
}

// kthSmallest returns the k-th smallest value (1-based) of s, reordering
// s in place. It is Hoare's selection with a median-of-three pivot:
// expected O(n), against O(n log n) for sorting, and this runs once per
// imagined dataset.
func kthSmallest(s []float64, k int) float64 {
	lo, hi := 0, len(s)-1
	k--
	for lo < hi {
		mid := lo + (hi-lo)/2
		// Median of three into s[mid].
		if s[mid] < s[lo] {
			s[mid], s[lo] = s[lo], s[mid]
		}
		if s[hi] < s[lo] {
			s[hi], s[lo] = s[lo], s[hi]
		}
		if s[hi] < s[mid] {
			s[hi], s[mid] = s[mid], s[hi]
		}
		pivot := s[mid]
		i, j := lo, hi
		for i <= j {
			for s[i] < pivot {
				i++
			}
			for s[j] > pivot {
				j--
			}
			if i <= j {
				s[i], s[j] = s[j], s[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return s[k]
		}
	}
	return s[k]
}

// OutsideLikelySet reports, for a discrete distribution p over outcomes,
// which outcomes lie outside its (1-ε)-likely set A = {y : log p(y) >= Q_ε}
// with Q_ε = inf{q : ε <= P(log p(Y) <= q)} (the paper's Eq. 6 and 15): the
// population version of the convention Rate applies to samples. Outcomes
// with probability 0 are always outside; outcomes tied in probability are
// inside or outside together. Cumulative probabilities are compared with ε
// with a tolerance of 1e-12, so that p = (0.05, 0.95) at ε = 0.05 keeps
// both outcomes whatever the rounding of the sum.
func OutsideLikelySet(p []float64, eps float64) []bool {
	threshold := LikelyThreshold(p, eps, nil)
	out := make([]bool, len(p))
	for y, v := range p {
		out[y] = v < threshold
	}
	return out
}

// LikelyThreshold returns exp(Q_ε) for the discrete distribution p: the
// outcomes with probability strictly below it are those OutsideLikelySet
// reports. scratch, if it has room for len(p) values, saves an allocation
// in hot loops.
func LikelyThreshold(p []float64, eps float64, scratch []float64) float64 {
	sorted := append(scratch[:0], p...)
	slices.Sort(sorted)
	// Walk the distinct probability values upward; the first whose
	// cumulative mass (ties included) reaches ε is exp(Q_ε).
	cum := 0.0
	for i := 0; i < len(sorted); {
		v := sorted[i]
		for i < len(sorted) && sorted[i] == v {
			cum += v
			i++
		}
		if cum >= eps-1e-12 {
			return v
		}
	}
	return math.Inf(1)
}
