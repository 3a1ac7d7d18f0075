package simdblas

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
)

func randF32(rng *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(rng.Float64()*2 - 1)
	}
	return x
}

// TestMulAddPacked checks that a product through a packed A equals,
// bit for bit, the SGEMM of Implementation on one worker and on several.
func TestMulAddPacked(t *testing.T) {
	if !Available {
		t.Skip("no AVX2/FMA micro-kernel on this CPU or platform")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct{ m, n, k int }{{1, 1, 1}, {7, 17, 3}, {97, 1025, 300}, {200, 70, 600}} {
		lda, ldb, ldc := tc.k+1, tc.n+2, tc.n+3
		a, b, c := randF32(rng, tc.m*lda), randF32(rng, tc.k*ldb), randF32(rng, tc.m*ldc)
		want := append([]float32(nil), c...)
		Implementation{}.Sgemm(blas.NoTrans, blas.NoTrans, tc.m, tc.n, tc.k, 1, a, lda, b, ldb, 1, want, ldc)
		p := Pack(tc.m, tc.k, a, lda)
		MulAddPacked(p, tc.n, b, ldb, c, ldc)
		for i := range c {
			if c[i] != want[i] {
				t.Fatalf("%v: element %d: %g, want %g (same order of sums)", tc, i, c[i], want[i])
			}
		}
	}
}

func TestReLU(t *testing.T) {
	for _, n := range []int{0, 1, 7, 8, 9, 31, 64, 1001} {
		x := make([]float32, n+1)
		for i := range x {
			x[i] = float32(i%5) - 2
		}
		if n > 3 {
			x[3] = float32(math.NaN())
		}
		sentinel := x[n]
		ReLU(x[:n])
		for i := 0; i < n; i++ {
			want := max(float32(i%5)-2, 0)
			if i == 3 {
				if !math.IsNaN(float64(x[i])) {
					t.Errorf("n %d: NaN became %g", n, x[i])
				}
				continue
			}
			if x[i] != want {
				t.Fatalf("n %d: x[%d] = %g, want %g", n, i, x[i], want)
			}
		}
		if x[n] != sentinel {
			t.Errorf("n %d: wrote past the slice", n)
		}
	}
}
