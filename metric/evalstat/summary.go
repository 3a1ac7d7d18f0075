package evalstat

import (
	"math"
	"slices"
)

// Mean returns the arithmetic mean of x, or NaN if x is empty (as numpy.mean).
func Mean(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	var s float64
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

// Std returns the standard deviation of x with ddof delta degrees of
// freedom, sqrt(sum (x_i - mean)^2 / (n - ddof)), as numpy.std: ddof = 0 is
// the population value, ddof = 1 the square root of the unbiased variance.
// It returns NaN if n - ddof <= 0, where numpy also gives NaN (with a
// warning) or inf.
func Std(x []float64, ddof int) float64 {
	d := len(x) - ddof
	if len(x) == 0 || d <= 0 {
		return math.NaN()
	}
	m := Mean(x)
	var ss float64
	for _, v := range x {
		ss += (v - m) * (v - m)
	}
	return math.Sqrt(ss / float64(d))
}

// Quantile returns the p-quantile of x by numpy's default "linear" method
// (Hyndman and Fan type 7): with s the sorted values and h = (n-1) p, it
// interpolates linearly between s[floor(h)] and s[floor(h)+1]. p = 0 and
// p = 1 give the minimum and maximum.
//
// Quantile does not modify x; it sorts a copy, which costs O(n log n) per
// call. It returns NaN, rather than panicking, for empty x, for p outside
// [0, 1] or NaN, and when x contains a NaN (as numpy.quantile does), so
// that summaries of degenerate groups can be reported rather than crash.
func Quantile(x []float64, p float64) float64 {
	if len(x) == 0 || !(0 <= p && p <= 1) || hasNaN(x) {
		return math.NaN()
	}
	s := slices.Clone(x)
	slices.Sort(s)
	h := float64(len(s)-1) * p
	lo := math.Floor(h)
	i := int(lo)
	if i >= len(s)-1 {
		return s[len(s)-1]
	}
	return lerp(s[i], s[i+1], h-lo)
}

// lerp interpolates between a and b as numpy's quantile does: from the
// nearer end, so that t = 1 returns b exactly and the result is monotone
// in t.
func lerp(a, b, t float64) float64 {
	d := b - a
	if t >= 0.5 {
		return b - d*(1-t)
	}
	return a + d*t
}
