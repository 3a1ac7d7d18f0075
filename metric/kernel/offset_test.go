package kernel

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// A common offset on every feature leaves distances, and so RBF values
// and the median rule, unchanged. Without centring, ||x||² + ||y||² - 2x·y
// at +1e8 lost the distances (the median rule saw all-zero distances).
func TestRBFOffsetInvariant(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	rows := func(n int, shift float64) (*mat.Dense, *mat.Dense) {
		a, b := mat.NewDense(n, 6, nil), mat.NewDense(n, 6, nil)
		for i := 0; i < n; i++ {
			for j := 0; j < 6; j++ {
				v := r.NormFloat64()
				a.Set(i, j, v)
				b.Set(i, j, v+shift)
			}
		}
		return a, b
	}
	x, xo := rows(40, 1e8)
	y, yo := rows(30, 1e8)
	// y's offset must match x's: shift y by the same 1e8.
	med, medo := MedianSqDist(x), MedianSqDist(xo)
	if math.Abs(med-medo) > 1e-6*med {
		t.Errorf("median squared distance %v, with offset %v", med, medo)
	}
	k := RBF{Gamma: 1 / med}
	g, go_ := k.Gram(x), k.Gram(xo)
	c, co := k.Cross(x, y), k.Cross(xo, yo)
	for i := 0; i < 40; i++ {
		for j := 0; j < 40; j++ {
			if d := math.Abs(g.At(i, j) - go_.At(i, j)); d > 1e-6 {
				t.Fatalf("Gram(%d,%d): %v without offset, %v with", i, j, g.At(i, j), go_.At(i, j))
			}
		}
		for j := 0; j < 30; j++ {
			if d := math.Abs(c.At(i, j) - co.At(i, j)); d > 1e-6 {
				t.Fatalf("Cross(%d,%d): %v without offset, %v with", i, j, c.At(i, j), co.At(i, j))
			}
		}
	}
	// Centring copies: the caller's rows are untouched.
	if xo.At(0, 0) < 1e7 {
		t.Error("Gram changed its input")
	}
}
