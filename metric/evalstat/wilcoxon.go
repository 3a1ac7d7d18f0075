package evalstat

import (
	"errors"
	"fmt"
	"math"
)

// WilcoxonResult is the outcome of a two-sided Wilcoxon signed-rank test.
type WilcoxonResult struct {
	// Statistic is min(W+, W-), the smaller of the rank sums of the
	// positive and of the negative differences (scipy's statistic for
	// the two-sided test).
	Statistic float64
	// PValue is the two-sided p-value.
	PValue float64
	// N is the number of non-zero differences the test used.
	N int
	// Exact tells whether PValue comes from the exact null distribution
	// (true) or the normal approximation (false).
	Exact bool
}

// wilcoxonExactMax is the largest sample for which the exact null
// distribution is used, as scipy's method="auto".
const wilcoxonExactMax = 50

// Wilcoxon performs the two-sided Wilcoxon signed-rank test of the
// hypothesis that the paired differences x - y are symmetric about zero,
// with scipy.stats.wilcoxon's defaults (zero_method "wilcox", no
// continuity correction, method "auto"):
//
//   - zero differences are dropped;
//   - |d| are ranked with ties sharing the average rank;
//   - with at most 50 differences, no ties and no zeros, the p-value is
//     exact, 2 P(W <= T) under the null (each sign ±1 with probability
//     1/2, so P is a count of subsets of 1..n by rank sum, over 2^n);
//   - otherwise it is the normal approximation
//     z = (T - n(n+1)/4) / sqrt(n(n+1)(2n+1)/24 - Σ(t³ - t)/48), p = 2 Φ(z),
//     where t runs over the sizes of groups of tied |d|.
//
// When every difference is zero there is no evidence of a difference and
// the result is N = 0, PValue = 1 (scipy returns NaN with a warning).
// Wilcoxon returns an error if the lengths differ or a value is NaN.
func Wilcoxon(x, y []float64) (WilcoxonResult, error) {
	if len(x) != len(y) {
		return WilcoxonResult{}, fmt.Errorf("evalstat: Wilcoxon: %d and %d paired values", len(x), len(y))
	}
	d := make([]float64, 0, len(x))
	zeros := 0
	for i := range x {
		v := x[i] - y[i]
		if math.IsNaN(v) {
			return WilcoxonResult{}, errors.New("evalstat: Wilcoxon: NaN difference")
		}
		if v == 0 {
			zeros++
			continue
		}
		d = append(d, v)
	}
	n := len(d)
	if n == 0 {
		return WilcoxonResult{PValue: 1}, nil
	}
	abs := make([]float64, n)
	for i, v := range d {
		abs[i] = math.Abs(v)
	}
	r := Ranks(abs)
	var wPlus, wMinus float64
	for i, v := range d {
		if v > 0 {
			wPlus += r[i]
		} else {
			wMinus += r[i]
		}
	}
	t := math.Min(wPlus, wMinus)
	ties := tieCorrection(r)
	res := WilcoxonResult{Statistic: t, N: n}
	if n <= wilcoxonExactMax && ties == 0 && zeros == 0 {
		res.Exact = true
		res.PValue = math.Min(1, 2*signedRankCDF(n, int(t)))
		return res, nil
	}
	fn := float64(n)
	mean := fn * (fn + 1) / 4
	variance := fn*(fn+1)*(2*fn+1)/24 - ties/48
	if variance <= 0 {
		return WilcoxonResult{Statistic: t, N: n, PValue: 1}, nil
	}
	z := (t - mean) / math.Sqrt(variance)
	res.PValue = math.Min(1, math.Erfc(-z/math.Sqrt2)) // 2 Φ(z), z <= 0
	return res, nil
}

// tieCorrection returns Σ (t³ - t) over groups of equal ranks.
func tieCorrection(ranks []float64) float64 {
	counts := make(map[float64]int)
	for _, v := range ranks {
		counts[v]++
	}
	var s float64
	for _, c := range counts {
		if c > 1 {
			t := float64(c)
			s += t*t*t - t
		}
	}
	return s
}

// signedRankCDF returns P(W <= t) for the signed-rank statistic W of n
// untied observations under the null: the number of subsets of {1..n}
// whose sum is at most t, divided by 2^n. Counts stay below 2^50 for
// n <= 50, so float64 holds them exactly.
func signedRankCDF(n, t int) float64 {
	maxSum := n * (n + 1) / 2
	if t >= maxSum {
		return 1
	}
	if t < 0 {
		return 0
	}
	c := make([]float64, maxSum+1)
	c[0] = 1
	for k := 1; k <= n; k++ {
		for s := maxSum; s >= k; s-- {
			c[s] += c[s-k]
		}
	}
	var below float64
	for s := 0; s <= t; s++ {
		below += c[s]
	}
	return below / math.Exp2(float64(n))
}
