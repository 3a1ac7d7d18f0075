package online

import (
	"errors"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/metric/frechet"
)

// TestNewFIDReferenceNotPSD: a reference covariance that is clearly not
// positive semidefinite is refused (frechet.ErrNotPSD), one rounded to
// float32 is not.
func TestNewFIDReferenceNotPSD(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	x := mat.NewDense(20, 40, nil)
	for i := range x.RawMatrix().Data {
		x.RawMatrix().Data[i] = rng.NormFloat64()
	}
	s := frechet.StatsOf(x, 1) // rank 19 in d = 40
	s32 := mat.NewSymDense(40, nil)
	for i := 0; i < 40; i++ {
		for j := i; j < 40; j++ {
			s32.SetSym(i, j, float64(float32(s.Sigma.At(i, j))))
		}
	}
	for _, tc := range []struct {
		name  string
		sigma *mat.SymDense
		bad   bool
	}{
		{"entry beyond its variances", mat.NewSymDense(2, []float64{1, 3, 3, 1}), true},
		{"indefinite, entries fine", mat.NewSymDense(3, []float64{1, 0.9, -0.9, 0.9, 1, 0.9, -0.9, 0.9, 1}), true},
		{"rank-deficient", s.Sigma, false},
		{"rank-deficient, float32", s32, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := tc.sigma.SymmetricDim()
			_, err := NewFIDReference(frechet.Stats{Mu: make([]float64, d), Sigma: tc.sigma})
			if tc.bad != errors.Is(err, frechet.ErrNotPSD) || (!tc.bad && err != nil) {
				t.Errorf("NewFIDReference: %v (want ErrNotPSD: %v)", err, tc.bad)
			}
		})
	}
}
