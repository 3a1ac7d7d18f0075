package online

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/metric/frechet"
)

// BenchmarkSelectFID_G3_d128 is the performance target for
// `genlens select`: G = 3 generators, d = 128, T = 1000, b = 5, 20 trials,
// the three FID algorithms; under 30 s in pure Go.
func BenchmarkSelectFID_G3_d128(b *testing.B) {
	fam := newGaussFamily(b, 128, harmonic, []float64{0.5, 1, 1.5}, 2000, 1)
	s := Simulation{Steps: 1000, Batch: 5, Trials: 20, Seed: 1}
	b.ResetTimer()
	for range b.N {
		if _, err := s.RunFID(context.Background(), fam.ref, fam.pools, allFID, DefaultFIDParams()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSelectIS_G5_K1000 is the IS counterpart at ImageNet's class
// count.
func BenchmarkSelectIS_G5_K1000(b *testing.B) {
	pools := classFamily(1000, linspace(5, 500, 5), linspace(0.5, 1.5, 5), 2000, 1)
	s := Simulation{Steps: 1000, Batch: 5, Trials: 20, Seed: 1}
	b.ResetTimer()
	for range b.N {
		if _, err := s.RunIS(context.Background(), pools, allIS, DefaultISParams()); err != nil {
			b.Fatal(err)
		}
	}
}

var (
	ref2048     *FIDReference
	ref2048Once sync.Once
)

// reference2048 is a full-rank reference at Inception's dimension,
// Σ_r = diag(1/(i+1)), prepared once per process (about 10 s in pure Go:
// its eigenvalues and factor are the O(d³) work done once).
func reference2048(b *testing.B) *FIDReference {
	ref2048Once.Do(func() {
		const d = 2048
		s := mat.NewSymDense(d, nil)
		for i := 0; i < d; i++ {
			s.SetSym(i, i, harmonic(i))
		}
		var err error
		if ref2048, err = NewFIDReference(frechet.Stats{Mu: make([]float64, d), Sigma: s}); err != nil {
			panic(err)
		}
	})
	return ref2048
}

// BenchmarkStepD2048 measures one online step (Update of the picked
// generator with a batch of 5 rows, which also computes its new index) at
// d = 2048 for a generator that already has n rows, n < d. The cost grows
// with n (an n×n eigenproblem and O(n d) work) and stays far below one
// O(d³) step: a single symmetric eigendecomposition of a 2048×2048 matrix
// takes about 8 s in pure Go.
func BenchmarkStepD2048(b *testing.B) {
	ref := reference2048(b)
	const d, batch = 2048, 5
	rng := rand.New(rand.NewPCG(1, 2))
	rows := func(n int) *mat.Dense {
		x := mat.NewDense(n, d, nil)
		for i := 0; i < n; i++ {
			for j := 0; j < d; j++ {
				x.Set(i, j, math.Sqrt(0.8*harmonic(j))*rng.NormFloat64())
			}
		}
		return x
	}
	for _, n := range []int{5, 100, 500} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			sel, err := NewFIDSelector(ref, 1, FIDUCB, DefaultFIDParams())
			if err != nil {
				b.Fatal(err)
			}
			if err := sel.Update(0, rows(n)); err != nil {
				b.Fatal(err)
			}
			batches := make([]*mat.Dense, b.N)
			for i := range batches {
				batches[i] = rows(batch)
			}
			b.ResetTimer()
			for i := range b.N {
				if err := sel.Update(0, batches[i]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkTraceSqrt128 is the eigenvalue step of one FID update at
// d = 128, the bulk of BenchmarkSelectFID_G3_d128.
func BenchmarkTraceSqrt128(b *testing.B) {
	const n = 128
	rng := rand.New(rand.NewPCG(1, 2))
	x := mat.NewDense(2*n, n, nil)
	for i := range x.RawMatrix().Data {
		x.RawMatrix().Data[i] = rng.NormFloat64()
	}
	s := mat.NewSymDense(n, nil)
	s.SymOuterK(1, x.T())
	a := make([]float64, n*n)
	b.Run("householderTridiag+Dsterf", func(b *testing.B) {
		for range b.N {
			copy(a, s.RawSymmetric().Data)
			if _, err := sumSqrtEigenUpper(n, a, n); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("mat.EigenSym", func(b *testing.B) {
		var es mat.EigenSym
		for range b.N {
			if !es.Factorize(s, false) {
				b.Fatal("no convergence")
			}
		}
	})
}
