package kscore

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/genlens/genlens/internal/exactmmd"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/metric/kernel"
)

// TestMMD2AtLargeOffsets: linear- and polynomial-kernel MMD² of rows that
// share an offset of up to 1e8 equal the exact value of the estimator for
// the same float64 rows. Evaluated directly, the kernel values are about
// 1e16 (linear) or 1e48 (KID's cubic) and their differences kept nothing:
// linear MMD² 9,600 for 4.16 at 1e8.
func TestMMD2AtLargeOffsets(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	const m, n, d = 14, 11, 4
	for _, off := range []float64{0, 1e3, 1e6, 1e8} {
		base := func(r int, shift float64) *mat.Dense {
			x := mat.NewDense(r, d, nil)
			for i := 0; i < r; i++ {
				for j := 0; j < d; j++ {
					x.Set(i, j, off+shift+rng.NormFloat64())
				}
			}
			return x
		}
		x, y := base(m, 0), base(n, 1)
		for _, c := range []struct {
			k             kernel.Kernel
			gamma, coef0  float64
			degree        int
			closedFormLin bool
		}{
			{kernel.Linear{}, 1, 0, 1, true},
			{kernel.Polynomial{Gamma: 1.0 / d, Coef0: 1, Degree: 3}, 1.0 / d, 1, 3, false},
			{kernel.Polynomial{Gamma: 0.5, Coef0: 2, Degree: 2}, 0.5, 2, 2, false},
			{kernel.Polynomial{Gamma: 0.25, Coef0: 1, Degree: 4}, 0.25, 1, 4, false},
		} {
			got, err := MMD2(c.k, x, y)
			if err != nil {
				t.Fatal(err)
			}
			want := exactmmd.Poly(x, y, c.gamma, c.coef0, c.degree)
			if math.Abs(got-want) > 1e-9*math.Abs(want) {
				t.Errorf("offset %g, %v: MMD² = %.12g, exact %.12g", off, c.k, got, want)
			}
			if c.closedFormLin {
				// ‖x̄ − ȳ‖² − tr S_x/m − tr S_y/n, on the rows minus the offset.
				if cf := linearClosedForm(x, y, off); math.Abs(got-cf) > 1e-9*math.Abs(cf) {
					t.Errorf("offset %g, linear: MMD² = %.12g, closed form %.12g", off, got, cf)
				}
			}
		}
	}
}

// linearClosedForm is the unbiased linear-kernel MMD², ‖x̄ − ȳ‖² − tr S_x/m
// − tr S_y/n with (n−1)-normalised covariances, of the rows minus off.
func linearClosedForm(x, y *mat.Dense, off float64) float64 {
	stats := func(a *mat.Dense) ([]float64, float64) {
		r, c := a.Dims()
		mu := make([]float64, c)
		for i := 0; i < r; i++ {
			for j := 0; j < c; j++ {
				mu[j] += (a.At(i, j) - off) / float64(r)
			}
		}
		var tr float64
		for i := 0; i < r; i++ {
			for j := 0; j < c; j++ {
				e := a.At(i, j) - off - mu[j]
				tr += e * e
			}
		}
		return mu, tr / float64(r-1) / float64(r)
	}
	mx, tx := stats(x)
	my, ty := stats(y)
	var dd float64
	for j := range mx {
		dd += (mx[j] - my[j]) * (mx[j] - my[j])
	}
	return dd - tx - ty
}

// BenchmarkMMD2Poly2000x64 times the polynomial (KID) kernel's MMD² of two
// 1000 × 64 sets, directly and around an offset of 1e8 (kernel.Shifted).
func BenchmarkMMD2Poly2000x64(b *testing.B) {
	for _, off := range []float64{0, 1e8} {
		b.Run(map[bool]string{true: "direct", false: "offset"}[off == 0], func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			x, y := mat.NewDense(1000, 64, nil), mat.NewDense(1000, 64, nil)
			for _, m := range []*mat.Dense{x, y} {
				raw := m.RawMatrix().Data
				for i := range raw {
					raw[i] = off + rng.NormFloat64()
				}
			}
			k := kernel.Polynomial{Gamma: 1.0 / 64, Coef0: 1, Degree: 3}
			for b.Loop() {
				if _, err := MMD2(k, x, y); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
