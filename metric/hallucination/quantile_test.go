package hallucination

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/genlens/genlens/internal/tensor/par"
)

func TestQuantileRank(t *testing.T) {
	for _, tc := range []struct {
		n    int
		eps  float64
		want int
	}{
		{2000, 0.05, 100}, // 0.05*2000 is 100.00000000000001 in float64
		{50, 0.05, 3},     // 2.5 -> 3
		{100, 0.05, 5},
		{100, 0.051, 6},
		{10, 0.75, 8}, // 7.5 -> 8
		{10, 0.001, 1},
		{5, 0.2, 1},
		{5, 0.21, 2},
		{3, 0.9999, 3},
		{1, 0.5, 1},
	} {
		if got := QuantileRank(tc.n, tc.eps); got != tc.want {
			t.Errorf("QuantileRank(%d, %v) = %d, want %d", tc.n, tc.eps, got, tc.want)
		}
	}
}

func TestQuantileByHand(t *testing.T) {
	s := []float64{-1, -5, -3, -2, -4}
	for _, tc := range []struct {
		eps, want float64
		below     int
	}{
		{0.2, -5, 0}, // k = 1: the minimum; nothing strictly below
		{0.21, -4, 1},
		{0.4, -4, 1},
		{0.41, -3, 2},
		{0.99, -1, 4},
	} {
		q := Quantile(s, tc.eps)
		if q != tc.want || countBelow(s, q) != tc.below {
			t.Errorf("eps=%v: Quantile = %v (%d below), want %v (%d below)", tc.eps, q, countBelow(s, q), tc.want, tc.below)
		}
	}
	if !slices.Equal(s, []float64{-1, -5, -3, -2, -4}) {
		t.Error("Quantile modified its input")
	}
	if !math.IsNaN(Quantile(nil, 0.1)) {
		t.Error("Quantile of nothing is not NaN")
	}
	// Ties: 10 of 100 values at log 0.1, the rest at log 0.9. At ε = 0.05
	// the quantile is log 0.1 and nothing is strictly below it.
	var tied []float64
	for i := range 100 {
		v := math.Log(0.9)
		if i%10 == 0 {
			v = math.Log(0.1)
		}
		tied = append(tied, v)
	}
	if q := Quantile(tied, 0.05); q != math.Log(0.1) || countBelow(tied, q) != 0 {
		t.Errorf("tied sample: Quantile %v", q)
	}
	if q := Quantile(tied, 0.11); q != math.Log(0.9) || countBelow(tied, q) != 10 {
		t.Errorf("tied sample at 0.11: Quantile %v", q)
	}
}

// kthSmallest against sorting, with many ties; and the guarantee of the
// convention: fewer than εn values lie strictly below the quantile, and at
// least εn lie at or below it.
func TestKthSmallestAndGuarantee(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 500 {
		n := 1 + r.IntN(60)
		s := make([]float64, n)
		for i := range s {
			s[i] = float64(r.IntN(1 + trial%7))
			if trial%3 == 0 {
				s[i] = r.NormFloat64()
			}
		}
		sorted := slices.Sorted(slices.Values(s))
		k := 1 + r.IntN(n)
		if got := kthSmallest(slices.Clone(s), k); got != sorted[k-1] {
			t.Fatalf("kthSmallest(%v, %d) = %v, want %v", s, k, got, sorted[k-1])
		}
		eps := r.Float64()
		if eps == 0 {
			continue
		}
		q := Quantile(s, eps)
		atOrBelow := countBelow(s, math.Nextafter(q, math.Inf(1)))
		if below := countBelow(s, q); float64(below) >= eps*float64(n)+1e-9 || float64(atOrBelow) < eps*float64(n)-1e-9 {
			t.Fatalf("eps=%v n=%d: %d strictly below and %d at or below the quantile %v of %v", eps, n, below, atOrBelow, q, s)
		}
	}
}

func TestOutsideLikelySet(t *testing.T) {
	for _, tc := range []struct {
		p    []float64
		eps  float64
		want []bool
	}{
		{[]float64{0.9, 0.1}, 0.05, []bool{false, false}},
		{[]float64{0.9, 0.1}, 0.2, []bool{false, true}},
		{[]float64{0.05, 0.95}, 0.05, []bool{false, false}}, // cumulative reaches ε exactly
		{[]float64{0.3, 0.7}, 0.75, []bool{true, false}},    // the most likely label stays inside
		{[]float64{0.5, 0.5}, 0.9, []bool{false, false}},    // ties go together
		{[]float64{0.02, 0.02, 0.96}, 0.03, []bool{false, false, false}},
		{[]float64{0.02, 0.02, 0.96}, 0.05, []bool{true, true, false}},
		{[]float64{0, 0.4, 0.6}, 0.01, []bool{true, false, false}}, // impossible outcomes are outside
		{[]float64{0.1, 0.2, 0.3, 0.4}, 0.3, []bool{true, false, false, false}},
		{[]float64{0.1, 0.2, 0.3, 0.4}, 0.31, []bool{true, true, false, false}},
	} {
		if got := OutsideLikelySet(tc.p, tc.eps); !slices.Equal(got, tc.want) {
			t.Errorf("OutsideLikelySet(%v, %v) = %v, want %v", tc.p, tc.eps, got, tc.want)
		}
	}
}

// Estimate seeds the generator of imagined dataset i with par.Mix(Seed,
// i): consecutive indices must give distinct seeds.
func TestSeedMixSpreadsIndices(t *testing.T) {
	seen := map[uint64]bool{}
	for i := range uint64(1000) {
		v := par.Mix(7, i)
		if seen[v] {
			t.Fatalf("par.Mix collision at %d", i)
		}
		seen[v] = true
	}
}
