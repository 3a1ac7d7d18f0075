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
					lda := n + rng.IntN(3)
					a := randMat(rng, n, lda)
					x := randMat(rng, n, abs(inc[0]))
					y := randMat(rng, n, abs(inc[1]))
					if ab[1] == 0 {
						for i := range y {
							y[i] = math.NaN()
						}
					}
					got := append([]float64(nil), y...)
					want := append([]float64(nil), y...)
					if ab[1] == 0 {
						clear(want) // gonum stores zeros first too; keep the check simple
					}
					Implementation{}.Dsymv(ul, n, ab[0], a, lda, x, inc[0], ab[1], got, inc[1])
					ref.Dsymv(ul, n, ab[0], a, lda, x, inc[0], ab[1], want, inc[1])
					name := fmt.Sprintf("%c n=%d inc=%v alpha=%g beta=%g", ul, n, inc, ab[0], ab[1])
					for i := 0; i < n; i++ {
						p := i * abs(inc[1])
						if got[p] != want[p] && !(math.Abs(got[p]-want[p]) <= 8*float64(n)*0x1p-52*float64(n)) {
							t.Fatalf("%s: y[%d] = %v, gonum %v", name, i, got[p], want[p])
						}
					}
				}
			}
		}
	}
}
