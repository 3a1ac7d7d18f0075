package frechet

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestDistanceNotPSD: a covariance that is clearly not positive
// semidefinite is an error wrapping ErrNotPSD on every path, never a
// clamped 0, whatever the mean difference.
func TestDistanceNotPSD(t *testing.T) {
	id2 := Stats{Mu: []float64{0, 0}, Sigma: diagSym([]float64{1, 1})}
	// Symmetric, positive diagonal, eigenvalues 4 and -2.
	pair := Stats{Mu: []float64{0, 0}, Sigma: mat.NewSymDense(2, []float64{1, 3, 3, 1})}
	// Every |σᵢⱼ| <= √(σᵢᵢσⱼⱼ), yet indefinite (determinant -2.888):
	// only a factorisation can tell.
	tri := mat.NewSymDense(3, []float64{1, 0.9, -0.9, 0.9, 1, 0.9, -0.9, 0.9, 1})
	id3 := Stats{Mu: []float64{0, 0, 0}, Sigma: diagSym([]float64{1, 1, 1})}
	far := []float64{1e3, -1e3, 1e3} // ||Δμ||² = 3e6 would mask a negative trace part
	for _, tc := range []struct {
		name string
		a, b Stats
		want string
	}{
		{"pair, first", pair, id2, "|covariance[0][1]| = 3 exceeds"},
		{"pair, second", id2, pair, "second statistics"},
		{"pair, far means", Stats{Mu: []float64{1e4, 0}, Sigma: pair.Sigma}, id2, "exceeds"},
		{"zero diagonal", Stats{Mu: []float64{0, 0}, Sigma: mat.NewSymDense(2, []float64{0, 1, 1, 0})}, id2, "exceeds"},
		{"three, first", Stats{Mu: id3.Mu, Sigma: tri}, id3, "first statistics: covariance is not positive semidefinite: its pivoted Cholesky"},
		{"three, second", id3, Stats{Mu: id3.Mu, Sigma: tri}, "second statistics"},
		{"three, far means", Stats{Mu: far, Sigma: tri}, id3, "pivoted Cholesky"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fd, err := Distance(tc.a, tc.b)
			if !errors.Is(err, ErrNotPSD) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Distance = %g, %v; want ErrNotPSD saying %q", fd, err, tc.want)
			}
		})
	}

	// The Reference paths.
	if _, err := NewReference(Stats{Mu: id3.Mu, Sigma: tri}); !errors.Is(err, ErrNotPSD) {
		t.Errorf("NewReference(indefinite) = %v", err)
	}
	if _, err := NewReference(pair); !errors.Is(err, ErrNotPSD) {
		t.Errorf("NewReference(pair) = %v", err)
	}
	ref, err := NewReference(id3)
	if err != nil {
		t.Fatal(err)
	}
	if fd, err := ref.Distance(Stats{Mu: far, Sigma: tri}); !errors.Is(err, ErrNotPSD) {
		t.Errorf("Reference.Distance(indefinite) = %g, %v", fd, err)
	}
	x := mat.NewDense(2, 2, []float64{0, 1, 2, 0})
	if fd, err := DistanceToRef(x, pair, 1); !errors.Is(err, ErrNotPSD) {
		t.Errorf("DistanceToRef(x, pair) = %g, %v", fd, err)
	}
	// (1, -1, 1) is the eigenvector of tri for eigenvalue -0.8: two rows
	// that differ along it see the negative part without an O(d³) step.
	x3 := mat.NewDense(2, 3, []float64{0, 0, 0, 1, -1, 1})
	if fd, err := DistanceToRef(x3, Stats{Mu: id3.Mu, Sigma: tri}, 1); !errors.Is(err, ErrNotPSD) {
		t.Errorf("DistanceToRef(x, indefinite) = %g, %v", fd, err)
	}
	if v := TraceSqrtProduct(tri, id3.Sigma); !math.IsNaN(v) {
		t.Errorf("TraceSqrtProduct(indefinite, I) = %g, want NaN", v)
	}
}

// TestAssembleClampOnlyRounding: a distance negative by rounding is
// clamped to 0, one negative beyond PSDTolerance of its scale is an error.
func TestAssembleClampOnlyRounding(t *testing.T) {
	mu := []float64{0, 0}
	for _, tc := range []struct {
		name           string
		mu2            []float64
		t1, t2, trSqrt float64
		want           float64
		err            bool
	}{
		{"exact", mu, 2, 2, 2, 0, false},
		{"positive", mu, 2, 3, 2, 1, false},
		{"rounding", mu, 2, 2, 2 * (1 + 1e-12), 0, false},
		{"float32 level", mu, 2, 2, 2 * (1 + 1e-6), 0, false},
		{"clearly negative", mu, 2, 2, 3, 0, true},
		{"negative beyond tolerance", mu, 2, 2, 2 * (1 + 1e-3), 0, true},
		{"mean difference counts in the scale", []float64{30, 40}, 2, 2, 2 + 1e-2, 2500 - 2e-2, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := assemble(mu, tc.mu2, tc.t1, tc.t2, tc.trSqrt)
			if tc.err {
				if !errors.Is(err, ErrNotPSD) || !strings.Contains(err.Error(), "negative by") {
					t.Errorf("assemble = %g, %v; want ErrNotPSD", got, err)
				}
				return
			}
			if err != nil || math.Abs(got-tc.want) > 1e-9 {
				t.Errorf("assemble = %g, %v; want %g", got, err, tc.want)
			}
		})
	}
}

// TestDistanceFloat32Covariance: a rank-deficient covariance stored in
// float32 is not positive semidefinite to float64 precision (its negative
// pivots reach about 10⁻⁷ of the trace); that is rounding, not an error,
// and its distance to the float64 original is 0 up to rounding.
func TestDistanceFloat32Covariance(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for _, c := range []struct{ n, d int }{{20, 64}, {100, 256}} {
		for _, x := range []*mat.Dense{correlated(rng, c.n, c.d, 3), inceptionLike(rng.Uint64(), c.n, c.d)} {
			s := StatsOf(x, 1)
			s32 := mat.NewSymDense(c.d, nil)
			for i := 0; i < c.d; i++ {
				for j := i; j < c.d; j++ {
					s32.SetSym(i, j, float64(float32(s.Sigma.At(i, j))))
				}
			}
			f := Stats{Mu: s.Mu, Sigma: s32}
			scale := 2 * trace(s.Sigma)
			for _, pair := range [][2]Stats{{f, s}, {s, f}} {
				fd, err := Distance(pair[0], pair[1])
				if err != nil || fd > 1e-5*scale {
					t.Errorf("n=%d d=%d: Distance(float32, float64) = %g (scale %g), %v", c.n, c.d, fd, scale, err)
				}
			}
			ref, err := NewReference(f)
			if err != nil {
				t.Fatalf("n=%d d=%d: NewReference(float32 covariance): %v", c.n, c.d, err)
			}
			if _, err := ref.DistanceToSamples(x, 1); err != nil {
				t.Errorf("n=%d d=%d: DistanceToSamples: %v", c.n, c.d, err)
			}
			if _, err := DistanceToRef(x, f, 1); err != nil {
				t.Errorf("n=%d d=%d: DistanceToRef: %v", c.n, c.d, err)
			}
		}
	}
}
