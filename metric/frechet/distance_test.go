package frechet

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/internal/testkit/shareddata"
)

func TestDistanceDiagonalClosedForm(t *testing.T) {
	// For diagonal covariances the Gaussians factor over coordinates:
	// FD = ||Δμ||² + Σ (√aᵢ - √bᵢ)².
	for _, tc := range []struct {
		name     string
		mu1, mu2 []float64
		a, b     []float64
	}{
		{"1-D", []float64{0}, []float64{3}, []float64{4}, []float64{9}},
		{"same mean", []float64{1, 2, 3}, []float64{1, 2, 3}, []float64{1, 2, 3}, []float64{4, 5, 6}},
		{"shifted", []float64{0, 0, 0, 0}, []float64{1, -1, 2, 0.5}, []float64{0.1, 1, 10, 100}, []float64{0.2, 0.5, 10, 1}},
		{"singular", []float64{0, 0, 0}, []float64{0, 1, 0}, []float64{0, 1, 4}, []float64{1, 0, 4}},
		{"zero covariances", []float64{1, 1}, []float64{0, 0}, []float64{0, 0}, []float64{0, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := 0.0
			for i := range tc.a {
				dm := tc.mu1[i] - tc.mu2[i]
				ds := math.Sqrt(tc.a[i]) - math.Sqrt(tc.b[i])
				want += dm*dm + ds*ds
			}
			got, err := Distance(Stats{Mu: tc.mu1, Sigma: diagSym(tc.a)}, Stats{Mu: tc.mu2, Sigma: diagSym(tc.b)})
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(got-want) > 1e-12*(1+want) {
				t.Errorf("FD = %.15g, want %.15g", got, want)
			}
		})
	}
}

func TestTraceSqrt2x2(t *testing.T) {
	// For a 2×2 M with real non-negative eigenvalues,
	// Tr √M = √(tr M + 2 √det M): (√λ₁ + √λ₂)² = λ₁ + λ₂ + 2√(λ₁λ₂).
	for _, tc := range []struct {
		name   string
		s1, s2 []float64 // upper triangles: a, b, c of [[a b] [b c]]
	}{
		{"non-commuting", []float64{2, 1, 3}, []float64{1, -0.5, 4}},
		{"strongly correlated", []float64{1, 0.99, 1}, []float64{5, -2, 1}},
		{"one singular", []float64{1, 2, 4}, []float64{3, 1, 2}},
		{"both singular", []float64{1, 1, 1}, []float64{1, -1, 1}},
		{"scaled", []float64{1e4, 30, 2}, []float64{1e-2, 0, 3e-3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s1 := mat.NewSymDense(2, []float64{tc.s1[0], tc.s1[1], tc.s1[1], tc.s1[2]})
			s2 := mat.NewSymDense(2, []float64{tc.s2[0], tc.s2[1], tc.s2[1], tc.s2[2]})
			var m mat.Dense
			m.Mul(s1, s2)
			det := mat.Det(&m)
			want := math.Sqrt(mat.Trace(&m) + 2*math.Sqrt(max(det, 0)))
			got := TraceSqrtProduct(s1, s2)
			if relErr(got, want) > 1e-12 {
				t.Errorf("TraceSqrtProduct = %.15g, want %.15g", got, want)
			}
			got2, err := TraceSqrtOfProduct(&m)
			if err != nil {
				t.Fatal(err)
			}
			if relErr(got2, want) > 1e-7 {
				t.Errorf("TraceSqrtOfProduct = %.15g, want %.15g", got2, want)
			}
		})
	}
}

func TestDistanceCommuting(t *testing.T) {
	// S₁ = Q diag(a) Qᵀ and S₂ = Q diag(b) Qᵀ commute, and the closed form
	// of the diagonal case holds in the rotated basis.
	rng := rand.New(rand.NewPCG(3, 4))
	const d = 25
	q := randOrth(rng, d)
	a, b := make([]float64, d), make([]float64, d)
	var want float64
	for i := range a {
		a[i] = rng.Float64() * 5
		b[i] = rng.Float64() * 5
		if i%7 == 0 {
			a[i] = 0 // some shared and some lone null directions
		}
		ds := math.Sqrt(a[i]) - math.Sqrt(b[i])
		want += ds * ds
	}
	mu := make([]float64, d)
	got, err := Distance(Stats{Mu: mu, Sigma: fromEig(q, a)}, Stats{Mu: mu, Sigma: fromEig(q, b)})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(got-want) > 1e-10*want {
		t.Errorf("FD = %.15g, want %.15g", got, want)
	}
}

func TestDistanceNonCommuting(t *testing.T) {
	// Against an independent route: eigenvectors of S₂, S₂^{1/2} S₁ S₂^{1/2}.
	rng := rand.New(rand.NewPCG(5, 6))
	for _, d := range []int{3, 10, 40} {
		s1 := randSPD(rng, d, 0.01, 3)
		s2 := randSPD(rng, d, 0.5, 10)
		want := traceSqrtIndependent(t, s1, s2)
		got := TraceSqrtProduct(s1, s2)
		if relErr(got, want) > 1e-10 {
			t.Errorf("d=%d: TraceSqrtProduct = %.15g, independent %.15g", d, got, want)
		}
		var m mat.Dense
		m.Mul(s1, s2)
		got2, err := TraceSqrtOfProduct(&m)
		if err != nil {
			t.Fatal(err)
		}
		if relErr(got2, want) > 1e-9 {
			t.Errorf("d=%d: TraceSqrtOfProduct = %.15g, independent %.15g", d, got2, want)
		}
	}
}

func TestDistanceSymmetricAndIdentical(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, tc := range []struct {
		name string
		n, d int
	}{
		{"full rank", 200, 20},
		{"singular, 5 samples in d=20", 5, 20},
		{"one dimension", 50, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := correlated(rng, tc.n, tc.d, 3)
			y := correlated(rng, tc.n, tc.d, -1)
			sx, sy := StatsOf(x, 1), StatsOf(y, 1)
			ab, err := Distance(sx, sy)
			if err != nil {
				t.Fatal(err)
			}
			ba, err := Distance(sy, sx)
			if err != nil {
				t.Fatal(err)
			}
			if math.IsNaN(ab) || relErr(ba, ab) > 1e-10 {
				t.Errorf("FD(a,b) = %.15g, FD(b,a) = %.15g", ab, ba)
			}
			same, err := Distance(sx, sx)
			if err != nil || same != 0 {
				t.Errorf("FD(a,a) = %g, %v; want exactly 0", same, err)
			}
			// The same rows in another order: statistics equal up to
			// rounding, so the full numerical path runs.
			perm := mat.NewDense(tc.n, tc.d, nil)
			for i := 0; i < tc.n; i++ {
				perm.SetRow(i, x.RawRowView(tc.n-1-i))
			}
			sp := StatsOf(perm, 1)
			if equalSym(sp.Sigma, sx.Sigma) {
				t.Log("permuted statistics came out bit-identical; numerical path not exercised")
			}
			fd, err := Distance(sp, sx)
			if err != nil {
				t.Fatal(err)
			}
			if math.IsNaN(fd) || math.Abs(fd) > 1e-9 {
				t.Errorf("FD(permuted a, a) = %g, want |FD| < 1e-9", fd)
			}
		})
	}
}

func TestDistanceSmallNPathMatchesFull(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, tc := range []struct {
		n, d, ddof int
		refRank    int // rows behind the reference statistics
	}{
		{2, 30, 1, 400},
		{5, 20, 1, 400},
		{5, 20, 0, 400},
		{17, 64, 1, 300},
		{63, 64, 0, 200},
		{10, 50, 1, 8}, // singular reference too
		{1, 10, 0, 100},
	} {
		ref := StatsOf(correlated(rng, tc.refRank, tc.d, 0.5), 1)
		x := correlated(rng, tc.n, tc.d, 0)
		full, err := Distance(StatsOf(x, tc.ddof), ref)
		if err != nil {
			t.Fatal(err)
		}
		small, err := DistanceToRef(x, ref, tc.ddof)
		if err != nil {
			t.Fatal(err)
		}
		r, err := NewReference(ref)
		if err != nil {
			t.Fatal(err)
		}
		cached, err := r.DistanceToSamples(x, tc.ddof)
		if err != nil {
			t.Fatal(err)
		}
		viaStats, err := r.Distance(StatsOf(x, tc.ddof))
		if err != nil {
			t.Fatal(err)
		}
		for name, got := range map[string]float64{"DistanceToRef": small, "Reference.DistanceToSamples": cached, "Reference.Distance": viaStats} {
			if relErr(got, full) > 1e-8 {
				t.Errorf("n=%d d=%d ddof=%d: %s = %.15g, Distance = %.15g", tc.n, tc.d, tc.ddof, name, got, full)
			}
		}
	}
}

func TestDistanceLargeNPath(t *testing.T) {
	// n >= d goes through the statistics; all entry points agree.
	rng := rand.New(rand.NewPCG(11, 12))
	ref := StatsOf(correlated(rng, 300, 16, 0), 1)
	x := correlated(rng, 100, 16, 0.3)
	want, err := Distance(StatsOf(x, 1), ref)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DistanceToRef(x, ref, 1)
	if err != nil || relErr(got, want) > 1e-12 {
		t.Errorf("DistanceToRef = %g, %v; want %g", got, err, want)
	}
	r, _ := NewReference(ref)
	got, err = r.DistanceToSamples(x, 1)
	if err != nil || relErr(got, want) > 1e-12 {
		t.Errorf("DistanceToSamples = %g, %v; want %g", got, err, want)
	}
	got, err = r.Distance(ref)
	if err != nil || got != 0 {
		t.Errorf("Reference.Distance(itself) = %g, %v; want 0", got, err)
	}
}

func TestDistanceErrors(t *testing.T) {
	good := Stats{Mu: []float64{0, 0}, Sigma: diagSym([]float64{1, 1})}
	one := NewAccumulator(2)
	one.Add([]float64{1, 2})
	for _, tc := range []struct {
		name string
		a, b Stats
		want string
	}{
		{"dimension mismatch", good, Stats{Mu: []float64{0, 0, 0}, Sigma: diagSym([]float64{1, 1, 1})}, "dimension mismatch: 2 and 3"},
		{"sigma size", Stats{Mu: []float64{0, 0}, Sigma: diagSym([]float64{1})}, good, "covariance is 1×1 but the mean has length 2"},
		{"no sigma", Stats{Mu: []float64{0, 0}}, good, "no covariance"},
		{"one row, ddof 1", one.Stats(1), good, "not finite"},
		{"negative variance", good, Stats{Mu: []float64{0, 0}, Sigma: diagSym([]float64{1, -1})}, "variance cannot be negative"},
		{"NaN mean", Stats{Mu: []float64{math.NaN(), 0}, Sigma: diagSym([]float64{1, 1})}, good, "mean[0] = NaN"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fd, err := Distance(tc.a, tc.b)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Distance = %g, %v; want error containing %q", fd, err, tc.want)
			}
		})
	}
	x := mat.NewDense(3, 2, []float64{1, 2, 3, 4, 5, 7})
	if _, err := DistanceToRef(x, Stats{Mu: []float64{0, 0, 0}, Sigma: diagSym([]float64{1, 1, 1})}, 1); err == nil {
		t.Error("DistanceToRef: no error for a dimension mismatch")
	}
	if _, err := DistanceToRef(x.Slice(0, 1, 0, 2).(*mat.Dense), good, 1); err == nil {
		t.Error("DistanceToRef: no error for one row with ddof 1")
	}
	x.Set(1, 1, math.Inf(1))
	if _, err := DistanceToRef(x, good, 1); err == nil || !strings.Contains(err.Error(), "row 2, column 2") {
		t.Errorf("DistanceToRef with +Inf: %v", err)
	}
}

func TestTraceSqrtOfProductFixture(t *testing.T) {
	// A 200×200 product S₁S₂ on which scipy 1.11's sqrtm blows up; the
	// data README gives the true trace of its square root to 7 digits.
	path := shareddata.Path(t, "fixtures/sqrtm_fails_200x200.npz")
	m, err := dataio.ReadMatrix(path, dataio.ReadOptions{Key: "array"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := TraceSqrtOfProduct(m)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(got-2.7620379) > 1e-6 {
		t.Errorf("Tr sqrt(M) = %.9f, want 2.7620379", got)
	}
}

func TestTraceSqrtOfProductErrors(t *testing.T) {
	if _, err := TraceSqrtOfProduct(mat.NewDense(2, 3, nil)); err == nil {
		t.Error("no error for a non-square matrix")
	}
	// A rotation has eigenvalues ±i: no product of PSD matrices.
	if _, err := TraceSqrtOfProduct(mat.NewDense(2, 2, []float64{0, -1, 1, 0})); err == nil {
		t.Error("no error for complex eigenvalues")
	}
}

func TestTraceSqrtProductZero(t *testing.T) {
	z := mat.NewSymDense(4, nil)
	if got := TraceSqrtProduct(z, diagSym([]float64{1, 2, 3, 4})); got != 0 {
		t.Errorf("Tr sqrt(0·S) = %g", got)
	}
}

func TestNuclearNormRoutesAgree(t *testing.T) {
	// With gonum's own BLAS the trace term sums singular values from an
	// SVD; with a tuned BLAS (simdblas, OpenBLAS) it takes square roots of
	// the eigenvalues of a Gram matrix; on
	// covariances shaped like real features (a dominant low-rank part,
	// small isotropic rest) both must give the same trace term.
	const d = 256
	s1 := StatsOf(inceptionLike(11, 600, d), 1).Sigma
	s2 := StatsOf(inceptionLike(12, 300, d), 1).Sigma
	f1, f2 := mustFactor(t, s1), mustFactor(t, s2)
	b := mat.NewDense(f2.rank(), d, nil)
	for i := 0; i < f2.rank(); i++ {
		for j, c := range f1.piv {
			b.Set(i, j, f2.u.At(i, f2.ipiv[c]))
		}
	}
	a := f1.mulUT(1, b)
	svd, err := nuclearNormSVD(a)
	if err != nil {
		t.Fatal(err)
	}
	gram, err := nuclearNormGram(a)
	if err != nil {
		t.Fatal(err)
	}
	want := traceSqrtIndependent(t, s1, s2)
	if relErr(svd, want) > 1e-10 || relErr(gram, want) > 1e-9 {
		t.Errorf("SVD route %.15g, Gram route %.15g, independent %.15g", svd, gram, want)
	}
}

func TestFactorFullRankMatchesPivoted(t *testing.T) {
	// The openblas build tries the unpivoted factor first; both factors
	// must give the same trace term, and a singular matrix must fall back.
	rng := rand.New(rand.NewPCG(13, 14))
	s1 := randSPD(rng, 30, 0.1, 4)
	s2 := randSPD(rng, 30, 0.1, 4)
	u1, u2 := factorFullRank(s1), factorFullRank(s2)
	if u1 == nil || u2 == nil {
		t.Fatal("unpivoted factor refused a well-conditioned matrix")
	}
	p1, p2 := mustFactor(t, s1), mustFactor(t, s2)
	a, _ := traceSqrtFactors(u1, u2)
	b, _ := traceSqrtFactors(p1, u2)
	c, _ := traceSqrtFactors(p1, p2)
	if relErr(a, c) > 1e-12 || relErr(b, c) > 1e-12 {
		t.Errorf("trace term: unpivoted %.15g, mixed %.15g, pivoted %.15g", a, b, c)
	}
	singular := StatsOf(correlated(rng, 5, 20, 0), 1).Sigma
	if f := factorFullRank(singular); f != nil {
		t.Error("unpivoted factor accepted a rank-4 matrix")
	}
	if f := mustFactor(t, singular); f.rank() != 4 {
		t.Errorf("pivoted rank of 5 centred rows in d=20 = %d, want 4", f.rank())
	}
}

// mustFactor is factor for a matrix that is positive semidefinite.
func mustFactor(t *testing.T, s mat.Symmetric) *pivChol {
	t.Helper()
	f, err := factor(s)
	if err != nil {
		t.Fatal(err)
	}
	return f
}
