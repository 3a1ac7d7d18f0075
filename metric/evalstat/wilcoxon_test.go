package evalstat

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// bruteSignedRank enumerates all 2^n sign patterns of the ranks 1..n and
// returns P(W+ <= t): an independent check of the counting recursion.
func bruteSignedRank(n int, t float64) float64 {
	var hit int
	for mask := 0; mask < 1<<n; mask++ {
		var w float64
		for k := 0; k < n; k++ {
			if mask&(1<<k) != 0 {
				w += float64(k + 1)
			}
		}
		if w <= t {
			hit++
		}
	}
	return float64(hit) / float64(int(1)<<n)
}

func TestWilcoxon(t *testing.T) {
	// Darwin's paired plant heights as differences (Fisher 1935), the
	// example of scipy.stats.wilcoxon's documentation. Ranked by |d|,
	// -48 is 10th and -67 is 14th, so W- = 24 = T; scipy: statistic 24,
	// p = 0.041259765625 (exact) = 2·676/32768.
	darwin := []float64{6, 8, 14, 16, 23, 24, 28, 29, 41, -48, 49, 56, 60, -67, 75}
	// The normal approximation for the same data: z = (24 - 60)/sqrt(310).
	zd := (24 - 60) / math.Sqrt(310)
	approx := math.Erfc(-zd / math.Sqrt2)

	tied := []float64{1, -1, 2, 2, -3, 4, 5, -6, 7, 8} // |1| twice, |2| twice
	// Ranks of |d|: 1.5 1.5 3.5 3.5 5 6 7 8 9 10; W- = 1.5 + 5 + 8 = 14.5.
	// Ties: two groups of 2: Σ(t³-t) = 12. n = 10: mean 27.5,
	// var = 10·11·21/24 - 12/48 = 96.25 - 0.25 = 96.
	zt := (14.5 - 27.5) / math.Sqrt(96)

	withZero := append([]float64{0, 0}, darwin...)

	for _, tc := range []struct {
		name    string
		d       []float64
		stat, p float64
		n       int
		exact   bool
	}{
		{"darwin exact (scipy doc)", darwin, 24, 0.041259765625, 15, true},
		{"ties use the normal approximation with tie correction", tied, 14.5, math.Erfc(-zt / math.Sqrt2), 10, false},
		{"zeros are dropped and force the approximation", withZero, 24, approx, 15, false},
		{"all positive n=5: exact p = 2/32", []float64{1, 2, 3, 4, 5}, 0, 2.0 / 32, 5, true},
		{"all zero", []float64{0, 0, 0}, 0, 1, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			y := make([]float64, len(tc.d))
			res, err := Wilcoxon(tc.d, y)
			if err != nil {
				t.Fatal(err)
			}
			if res.Statistic != tc.stat || res.N != tc.n || res.Exact != tc.exact {
				t.Errorf("got %+v, want statistic %v, n %d, exact %v", res, tc.stat, tc.n, tc.exact)
			}
			if math.Abs(res.PValue-tc.p) > 1e-12 {
				t.Errorf("p = %.15g, want %.15g", res.PValue, tc.p)
			}
			// Swapping x and y leaves a two-sided test unchanged.
			back, _ := Wilcoxon(y, tc.d)
			if back.PValue != res.PValue || back.Statistic != res.Statistic {
				t.Errorf("swapped: %+v vs %+v", back, res)
			}
		})
	}
	if _, err := Wilcoxon([]float64{1, 2}, []float64{1}); err == nil {
		t.Error("no error for different lengths")
	}
	if _, err := Wilcoxon([]float64{1, math.NaN()}, []float64{0, 0}); err == nil {
		t.Error("no error for NaN")
	}
}

func TestSignedRankCDFMatchesEnumeration(t *testing.T) {
	for _, n := range []int{1, 2, 5, 10, 15} {
		max := n * (n + 1) / 2
		for tt := -1; tt <= max; tt += 1 + max/7 {
			want := bruteSignedRank(n, float64(tt))
			if got := signedRankCDF(n, tt); math.Abs(got-want) > 1e-15 {
				t.Errorf("n=%d t=%d: %v, enumeration %v", n, tt, got, want)
			}
		}
	}
	// Darwin: P(W <= 24) for n = 15 is 676/32768.
	if got := signedRankCDF(15, 24); got != 676.0/32768 {
		t.Errorf("P(W <= 24 | n = 15) = %v, want 676/32768", got)
	}
}

func TestWilcoxonNullIsCalibrated(t *testing.T) {
	// Under the null (symmetric differences) p < 0.05 about 5% of the
	// time, for the exact (n = 20) and approximate (n = 100) branches.
	r := rand.New(rand.NewPCG(4, 2))
	for _, n := range []int{20, 100} {
		const reps = 2000
		var rejected int
		for range reps {
			x, y := make([]float64, n), make([]float64, n)
			for i := range x {
				x[i] = r.NormFloat64()
				y[i] = r.NormFloat64()
			}
			res, err := Wilcoxon(x, y)
			if err != nil {
				t.Fatal(err)
			}
			if res.PValue < 0.05 {
				rejected++
			}
		}
		rate := float64(rejected) / reps
		// Binomial sd at 5% over 2000 draws is 0.5%; allow 4 sd. The
		// exact test is conservative (discrete), so 3.5-5.5% is typical.
		if rate < 0.03 || rate > 0.07 {
			t.Errorf("n=%d: rejection rate %.3f under the null", n, rate)
		}
	}
}

func ExampleWilcoxon() {
	// Absolute errors of two estimators over the same eight trials.
	a := []float64{0.21, 0.35, 0.12, 0.40, 0.28, 0.19, 0.33, 0.25}
	b := []float64{0.30, 0.41, 0.22, 0.38, 0.45, 0.27, 0.52, 0.36}
	// a wins in 7 of 8 trials; its one loss (0.02) has the smallest
	// |difference|, so T = 1 and p = 2 P(W <= 1) = 2 (2/256).
	res, _ := Wilcoxon(a, b)
	fmt.Printf("T = %v, p = %.4f (exact: %v)\n", res.Statistic, res.PValue, res.Exact)
	// Output: T = 1, p = 0.0156 (exact: true)
}
