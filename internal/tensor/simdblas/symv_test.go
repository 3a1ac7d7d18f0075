package simdblas

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
)

// TestSymv compares Dsymv with gonum's on both triangles, around the
// sizes where it takes over (symvMin) and changes its number of bands,
// with padded rows, strided and reversed vectors, and alpha, beta in
// {0, 1, other}; beta = 0 must overwrite NaN in y.
func TestSymv(t *testing.T) {
	if !Available {
		t.Skip("no AVX2/FMA kernel on this CPU or platform")
	}
	rng := rand.New(rand.NewPCG(5, 5))
	for _, n := range []int{1, 9, symvMin - 1, symvMin, 65, 255, 256, 300, 1030} {
		for _, ul := range []blas.Uplo{blas.Upper, blas.Lower} {
			for _, inc := range [][2]int{{1, 1}, {3, 2}, {-2, -1}} {
				for _, ab := range [][2]float64{{1, 0}, {-0.7, 1}, {2, 0.3}, {0, 0.5}} {
					symvCase(t, rng, ul, n, n+rng.IntN(3), inc[0], inc[1], ab[0], ab[1])
				}
			}
		}
	}
}

// symvCase runs one DSYMV against gonum.
func symvCase(t *testing.T, rng *rand.Rand, ul blas.Uplo, n, lda, incX, incY int, alpha, beta float64) {
	t.Helper()
	a := randMat(rng, n, lda)
	x := randMat(rng, n, abs(incX))
	y := randMat(rng, n, abs(incY))
	if beta == 0 {
		for i := range y {
			y[i] = math.NaN()
		}
	}
	got := append([]float64(nil), y...)
	want := append([]float64(nil), y...)
	if beta == 0 {
		clear(want) // gonum stores zeros first too; keep the check simple
	}
	Implementation{}.Dsymv(ul, n, alpha, a, lda, x, incX, beta, got, incY)
	ref.Dsymv(ul, n, alpha, a, lda, x, incX, beta, want, incY)
	name := fmt.Sprintf("%c n=%d inc=%d,%d alpha=%g beta=%g", ul, n, incX, incY, alpha, beta)
	for i := 0; i < n; i++ {
		p := i * abs(incY)
		if got[p] != want[p] && !(math.Abs(got[p]-want[p]) <= 8*float64(n)*0x1p-52*float64(n)) {
			t.Fatalf("%s: y[%d] = %v, gonum %v", name, i, got[p], want[p])
		}
	}
}
