package monitor

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// With fewer rows than columns the axes come from the Gram matrix: the
// same eigenvalues and axes (up to sign) as the covariance's.
func TestGramAxes(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 5))
	const n, d = 30, 80
	z := mat.NewDense(n, d, nil)
	for i := range n {
		for j := range d {
			z.Set(i, j, r.NormFloat64()*float64(1+j%7))
		}
	}
	gv, gx, ok := gramAxes(z)
	if !ok || len(gv) != n {
		t.Fatalf("gramAxes: %v, %d values", ok, len(gv))
	}
	var cov mat.SymDense
	cov.SymOuterK(1/float64(n-1), z.T())
	var eig mat.EigenSym
	if !eig.Factorize(&cov, true) {
		t.Fatal("no convergence")
	}
	vals := eig.Values(nil)
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	// EigenSym's values ascend.
	for k := range n - 1 {
		i := d - 1 - k
		if math.Abs(gv[k]-vals[i]) > 1e-9*vals[d-1] {
			t.Errorf("value %d: %v, want %v", k, gv[k], vals[i])
		}
		if dot := math.Abs(floats.Dot(gx[k], mat.Col(nil, i, &vecs))); math.Abs(dot-1) > 1e-7 {
			t.Errorf("axis %d: |cos| %v with the covariance's", k, dot)
		}
	}
	// A constant reference: no axes from the Gram matrix.
	if _, _, ok := gramAxes(mat.NewDense(3, 5, nil)); ok {
		t.Error("a zero matrix gave axes")
	}
}
