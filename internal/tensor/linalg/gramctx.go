package linalg

import (
	"context"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// gramBlock is the side of the blocks GramContext computes between two
// looks at its context: a 1024 × 1024 block of 4096-dimensional rows is
// 4·10⁹ multiply-adds, a fraction of a second.
const gramBlock = 1024

// GramContext is Gram stopping, with ctx's error, between blocks of
// gramBlock rows once ctx is done: the Gram matrix of ten thousand rows
// of thousands of dimensions is a minute of one BLAS call otherwise. Up
// to gramBlock rows it is Gram, bit for bit; above, the diagonal blocks
// are AddGram's and the others one GEMM each, as AddGram's own halves
// are, so that only the blocking of the sums may differ from Gram's.
func GramContext(ctx context.Context, x *mat.Dense) (*mat.SymDense, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r, k := x.Dims()
	if r <= gramBlock {
		return Gram(x), nil
	}
	g := mat.NewSymDense(r, nil)
	rc, rx := g.RawSymmetric(), x.RawMatrix()
	for i0 := 0; i0 < r; i0 += gramBlock {
		i1 := min(i0+gramBlock, r)
		for j0 := i0; j0 < r; j0 += gramBlock {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			j1 := min(j0+gramBlock, r)
			c := rc.Data[i0*rc.Stride+j0:]
			if j0 > i0 {
				gemmNT(c, rc.Stride, rx.Data[i0*rx.Stride:], rx.Data[j0*rx.Stride:], rx.Stride, i1-i0, j1-j0, k, 1)
				continue
			}
			if fastSyrk {
				blas64.Implementation().Dsyrk(blas.Upper, blas.NoTrans, i1-i0, k, 1, rx.Data[i0*rx.Stride:], rx.Stride, 1, c, rc.Stride)
			} else {
				symRankK(c, rc.Stride, rx.Data[i0*rx.Stride:], rx.Stride, i1-i0, k, 1)
			}
		}
	}
	return g, nil
}
