package simdblas

import (
	"fmt"
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

// TestMulAddPacked checks, with each kernel, that a product through a
// packed A equals bit for bit the SGEMM driver's (on one worker and on
// several), and that MulAddPackedReLU is that result clamped at zero.
func TestMulAddPacked(t *testing.T) {
	defer func(k *kernel[float32]) { sgemmK = k }(sgemmK)
	for _, kn := range sgemmKernels() {
		sgemmK = kn
		rng := rand.New(rand.NewPCG(3, 4))
		for _, tc := range []struct{ m, n, k int }{{1, 1, 1}, {7, 17, 3}, {13, 33, 0}, {97, 1025, 300}, {200, 70, 600}, {25, 40, 257}} {
			lda, ldb, ldc := tc.k+1, tc.n+2, tc.n+3
			a, b, c := randF32(rng, tc.m*lda), randF32(rng, tc.k*ldb), randF32(rng, tc.m*ldc)
			c[1] = float32(math.NaN())
			want := append([]float32(nil), c...)
			gemm(kn, false, false, tc.m, tc.n, tc.k, 1, a, lda, b, ldb, 1, want, ldc, full)
			if Available && kn == bestSgemm() {
				impl := append([]float32(nil), c...)
				Implementation{}.Sgemm(blas.NoTrans, blas.NoTrans, tc.m, tc.n, tc.k, 1, a, lda, b, ldb, 1, impl, ldc)
				same(t, fmt.Sprintf("%s kernel %v: Sgemm", kn.name, tc), impl, want)
			}
			p := Pack(tc.m, tc.k, a, lda)
			got := append([]float32(nil), c...)
			MulAddPacked(p, tc.n, b, ldb, got, ldc)
			same(t, fmt.Sprintf("%s kernel %v: MulAddPacked", kn.name, tc), got, want)
			for i := range tc.m {
				ReLU(want[i*ldc : i*ldc+tc.n])
			}
			got = append(got[:0], c...)
			MulAddPackedReLU(p, tc.n, b, ldb, got, ldc)
			same(t, fmt.Sprintf("%s kernel %v: MulAddPackedReLU", kn.name, tc), got, want)
			// MulPackedBias: as MulAdd on C filled with the bias, without
			// reading C (NaN there must not survive).
			bias := randF32(rng, tc.m)
			filled := append([]float32(nil), c...)
			for i := range tc.m {
				for j := range tc.n {
					filled[i*ldc+j] = bias[i]
				}
			}
			for _, relu := range []bool{false, true} {
				want := append([]float32(nil), filled...)
				mulAddPacked(p, tc.n, b, ldb, want, ldc, relu, nil)
				got := append([]float32(nil), c...)
				for i := range tc.m {
					got[i*ldc] = float32(math.NaN())
				}
				for i := range tc.m {
					for j := tc.n; j < ldc && i*ldc+j < len(got); j++ {
						got[i*ldc+j] = c[i*ldc+j] // outside C: must not change
					}
				}
				start := append([]float32(nil), got...)
				MulPackedBias(p, tc.n, b, ldb, bias, got, ldc, relu)
				same(t, fmt.Sprintf("%s kernel %v: MulPackedBias relu=%v", kn.name, tc, relu), got, want)
				// MulPackedBiasPanels: the same with B's panels written
				// value by value by the caller.
				fill := func(dst []float32, p0, kc, j0, nc, nr int) {
					for q := range dst {
						s, p, j := q/(kc*nr), q%(kc*nr)/nr, q%nr
						if col := s*nr + j; col < nc {
							dst[q] = b[(p0+p)*ldb+j0+col]
						} else {
							dst[q] = 0
						}
					}
				}
				got = append(got[:0], start...)
				MulPackedBiasPanels(p, tc.n, fill, bias, got, ldc, relu)
				same(t, fmt.Sprintf("%s kernel %v: MulPackedBiasPanels relu=%v", kn.name, tc, relu), got, want)
			}
		}
	}
}

// same checks got against want bit for bit (NaN matching NaN).
func same(t *testing.T, name string, got, want []float32) {
	t.Helper()
	for i := range got {
		g, w := got[i], want[i]
		if g != w && !(g != g && w != w) || math.Signbit(float64(g)) != math.Signbit(float64(w)) {
			t.Fatalf("%s: element %d: %g, want %g", name, i, g, w)
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
