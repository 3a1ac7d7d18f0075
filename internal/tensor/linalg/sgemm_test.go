package linalg

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// TestSgemm compares Sgemm with gonum's reference SGEMM on shapes that
// cut through every block edge of packedSgemm (partial 6-row and
// 16-column slivers, several kc and nc blocks), with leading dimensions
// wider than the matrices and beta in {0, 1, 0.5}.
func TestSgemm(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct{ m, n, k int }{
		{1, 1, 1}, {6, 16, 1}, {7, 17, 3}, {5, 15, 257}, {97, 1025, 300}, {192, 289, 768}, {13, 64, 520},
	} {
		for _, beta := range []float32{0, 1, 0.5} {
			lda, ldb, ldc := tc.k+3, tc.n+5, tc.n+2
			a := randF32(rng, tc.m*lda)
			b := randF32(rng, tc.k*ldb)
			c := randF32(rng, tc.m*ldc)
			want := append([]float32(nil), c...)
			Sgemm(false, false, tc.m, tc.n, tc.k, 1, a, lda, b, ldb, beta, c, ldc)
			gonum.Implementation{}.Sgemm(blas.NoTrans, blas.NoTrans, tc.m, tc.n, tc.k, 1, a, lda, b, ldb, beta, want, ldc)
			var worst float64
			for i := 0; i < tc.m; i++ {
				for j := 0; j < ldc; j++ {
					d := math.Abs(float64(c[i*ldc+j] - want[i*ldc+j]))
					if j >= tc.n && d != 0 {
						t.Fatalf("%v beta %g: wrote outside the matrix at (%d, %d)", tc, beta, i, j)
					}
					worst = math.Max(worst, d)
				}
			}
			if tol := 1e-5 * float64(tc.k); worst > tol {
				t.Errorf("%v beta %g: max abs diff %.3g > %.3g", tc, beta, worst, tol)
			}
		}
	}
}

func randF32(rng *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(rng.Float64()*2 - 1)
	}
	return x
}
