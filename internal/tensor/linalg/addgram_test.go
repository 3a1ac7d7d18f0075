package linalg

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// AddGram recurses above symLeaf rows: check sizes on both sides of it,
// odd splits and a strided view, against a plain product.
func TestAddGram(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	for _, n := range []int{1, 7, symLeaf, symLeaf + 1, 2*symLeaf + 3} {
		big := randDense(r, n+2, 9)
		v := big.Slice(1, n+1, 2, 9).(*mat.Dense) // n×7 view, stride 9
		c := mat.NewSymDense(n, nil)
		for i := 0; i < n; i++ {
			for j := i; j < n; j++ {
				c.SetSym(i, j, 1) // AddGram adds to what is there
			}
		}
		AddGram(c, v, 0.5)
		var want mat.Dense
		want.Mul(v, v.T())
		for i := 0; i < n; i++ {
			for j := i; j < n; j++ {
				if w := 1 + 0.5*want.At(i, j); math.Abs(c.At(i, j)-w) > 1e-12 {
					t.Fatalf("n=%d: c[%d][%d] = %v, want %v", n, i, j, c.At(i, j), w)
				}
			}
		}
	}
}

func randDense(r *rand.Rand, n, d int) *mat.Dense {
	x := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			x.Set(i, j, r.NormFloat64())
		}
	}
	return x
}
