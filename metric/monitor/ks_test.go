package monitor

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// bruteKS enumerates every arrangement of n1 values of one sample and n2
// of the other in the pooled order (no ties) and returns the exact
// P(D ≥ d), D computed from the arrangement itself.
func bruteKS(n1, n2 int, d float64) float64 {
	total, hit := 0, 0
	var rec func(i, j int, maxd float64)
	rec = func(i, j int, maxd float64) {
		if i == n1 && j == n2 {
			total++
			if maxd >= d-1e-12 {
				hit++
			}
			return
		}
		if i < n1 {
			rec(i+1, j, math.Max(maxd, math.Abs(float64(i+1)/float64(n1)-float64(j)/float64(n2))))
		}
		if j < n2 {
			rec(i, j+1, math.Max(maxd, math.Abs(float64(i)/float64(n1)-float64(j+1)/float64(n2))))
		}
	}
	rec(0, 0, 0)
	return float64(hit) / float64(total)
}

func TestKSPValueExactMatchesEnumeration(t *testing.T) {
	for _, sz := range [][2]int{{1, 1}, {2, 3}, {3, 3}, {4, 6}, {5, 5}, {3, 8}, {7, 5}, {6, 9}, {8, 8}, {10, 4}} {
		n1, n2 := sz[0], sz[1]
		// Every attainable statistic: multiples of 1/lcm.
		g := gcd(n1, n2)
		lcm := n1 / g * n2
		for h := 0; h <= lcm; h++ {
			d := float64(h) / float64(lcm)
			want := bruteKS(n1, n2, d)
			got := KSPValue(d, n1, n2)
			if math.Abs(got-want) > 1e-12*math.Max(1, want) && math.Abs(got-want) > 1e-14 {
				t.Errorf("n1=%d n2=%d d=%.4f: p %.15g, enumeration %.15g", n1, n2, d, got, want)
			}
		}
	}
}

// TestKSSquareAgreesWithPaths checks the closed form for equal sizes
// against the lattice-path computation, which handles any sizes.
func TestKSSquareAgreesWithPaths(t *testing.T) {
	for _, n := range []int{20, 100, 500} {
		for h := 1; h <= n; h += max(1, n/17) {
			a, b := ksSquare(n, h), ksOutside(n, n, int64(h)*int64(n))
			if math.Abs(a-b) > 1e-10*math.Max(b, 1e-300) && math.Abs(a-b) > 1e-280 {
				t.Errorf("n=%d h=%d: closed form %.15g, paths %.15g", n, h, a, b)
			}
		}
	}
}

// TestKSPValueKnown pins values of the exact null distribution: for
// n1 = n2 = 5, P(D ≥ 1) = 2/C(10,5) = 2/252, and P(D ≥ 0.6) from the
// reflection principle, 2 (C(10,2) - C(10,-1))/C(10,5) = 90/252.
func TestKSPValueKnown(t *testing.T) {
	for _, tc := range []struct {
		d      float64
		n1, n2 int
		want   float64
	}{
		{1, 5, 5, 2.0 / 252},
		{0.6, 5, 5, 90.0 / 252},
		{0, 7, 9, 1},
		{1, 3, 4, 2.0 / 35},
	} {
		if got := KSPValue(tc.d, tc.n1, tc.n2); math.Abs(got-tc.want) > 1e-13 {
			t.Errorf("KSPValue(%v, %d, %d) = %.15g, want %.15g", tc.d, tc.n1, tc.n2, got, tc.want)
		}
	}
}

// TestKolmogorovSF checks the limiting distribution against its
// tabulated critical values (P(K > 1.3581) = 0.05, P(K > 1.6276) = 0.01,
// P(K > 1.2238) = 0.10) and P(K > 1) = 0.26999967167735, both series
// meeting at z = 1.
func TestKolmogorovSF(t *testing.T) {
	for _, tc := range []struct{ z, want, tol float64 }{
		{1.3581, 0.05, 3e-5}, {1.6276, 0.01, 3e-5}, {1.2238, 0.10, 3e-5},
		{1, 0.26999967167735456, 1e-12}, {0.5, 0.9639452436648751, 1e-12}, {3, 3.045996e-08, 1e-13},
	} {
		if got := KolmogorovSF(tc.z); math.Abs(got-tc.want) > tc.tol {
			t.Errorf("KolmogorovSF(%v) = %.13g, want %.13g", tc.z, got, tc.want)
		}
	}
	if a, b := KolmogorovSF(math.Nextafter(1, 0)), KolmogorovSF(1); math.Abs(a-b) > 1e-12 {
		t.Errorf("the two series disagree at 1: %v and %v", a, b)
	}
}

// TestKSAsymptoticNearExact compares the asymptotic p-value with the
// exact one at sizes where both can be computed (just at the exact
// method's bound): within a few percent for p-values from 1e-4 up.
func TestKSAsymptoticNearExact(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	for _, sz := range [][2]int{{10000, 100}, {9000, 1000}, {10000, 2500}} {
		n1, n2 := sz[0], sz[1]
		en := float64(n1) * float64(n2) / float64(n1+n2)
		for _, z := range []float64{0.6, 0.9, 1.2, 1.5, 1.9} {
			d := z / math.Sqrt(en)
			g := gcd(n1, n2)
			lcm := float64(n1/g) * float64(n2)
			d = math.Round(d*lcm) / lcm
			exact, asym := KSPValue(d, n1, n2), ksAsymptotic(d, n1, n2)
			if math.Abs(asym-exact)/exact > 0.03 {
				t.Errorf("n1=%d n2=%d d=%.5f: asymptotic %.6g, exact %.6g", n1, n2, d, asym, exact)
			}
		}
	}
}

func TestKSStatistic(t *testing.T) {
	for _, tc := range []struct {
		a, b []float64
		want float64
	}{
		{[]float64{1, 2, 3}, []float64{4, 5, 6}, 1},
		{[]float64{1, 2, 3, 4}, []float64{1, 2, 3, 4}, 0},
		// Ties step together: F_a(2) = 2/3 against F_b(2) = 1/2 (1/6,
		// not the 2/3 - 1/4 of a walk that splits the tie); the largest
		// gap is at 3, 1 - 1/2.
		{[]float64{1, 2, 3}, []float64{2, 2, 5, 6}, 0.5},
		{[]float64{2, 3}, []float64{2, 2, 2, 9}, 0.25},
		{[]float64{0}, []float64{-1, 1}, 0.5},
	} {
		if got := KSStatistic(tc.a, tc.b); math.Abs(got-tc.want) > 1e-15 {
			t.Errorf("KSStatistic(%v, %v) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
	// Against the definition on random samples with ties.
	r := rand.New(rand.NewPCG(1, 2))
	for range 50 {
		a, b := make([]float64, 1+r.IntN(30)), make([]float64, 1+r.IntN(30))
		for i := range a {
			a[i] = float64(r.IntN(10))
		}
		for i := range b {
			b[i] = float64(r.IntN(12))
		}
		slices.Sort(a)
		slices.Sort(b)
		var want float64
		for _, x := range append(slices.Clone(a), b...) {
			fa := float64(countLE(a, x)) / float64(len(a))
			fb := float64(countLE(b, x)) / float64(len(b))
			want = math.Max(want, math.Abs(fa-fb))
		}
		if got := KSStatistic(a, b); math.Abs(got-want) > 1e-15 {
			t.Fatalf("KSStatistic(%v, %v) = %v, want %v", a, b, got, want)
		}
	}
}

func countLE(v []float64, x float64) int {
	n := 0
	for _, a := range v {
		if a <= x {
			n++
		}
	}
	return n
}

// KSStatistic of a small sample against a large one (binary searches)
// is bit for bit the walk through both, with ties within and across the
// samples, either way round.
func TestKSFewIsTheWalk(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 9))
	for trial := range 2000 {
		nl, ns := 16+r.IntN(400), 1+r.IntN(20)
		grid := float64(1 + r.IntN(50)) // coarse values: many ties
		draw := func(n int, shift float64) []float64 {
			v := make([]float64, n)
			for i := range v {
				v[i] = math.Round((r.NormFloat64()+shift)*grid) / grid
			}
			slices.Sort(v)
			return v
		}
		l, s := draw(nl, 0), draw(ns, r.NormFloat64())
		if ns*16 > nl {
			continue
		}
		if got, want := KSStatistic(l, s), ksWalk(l, s); got != want {
			t.Fatalf("trial %d: KSStatistic(l, s) = %v, the walk %v\nl %v\ns %v", trial, got, want, l, s)
		}
		if got, want := KSStatistic(s, l), ksWalk(s, l); got != want {
			t.Fatalf("trial %d: KSStatistic(s, l) = %v, the walk %v", trial, got, want)
		}
	}
}

// BenchmarkKSStatisticChunkOfOne: one row's feature against 300
// reference values, as a monitor chunked by single rows asks 4,000
// features × 100 chunks of it for a page.
func BenchmarkKSStatisticChunkOfOne(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	l := make([]float64, 300)
	for i := range l {
		l[i] = r.NormFloat64()
	}
	slices.Sort(l)
	s := []float64{0.7}
	b.Run("walk", func(b *testing.B) {
		for b.Loop() {
			ksWalk(l, s)
		}
	})
	b.Run("few", func(b *testing.B) {
		for b.Loop() {
			KSStatistic(l, s)
		}
	})
}
