package linalg

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// Gram returns X Xᵀ for the rows of x, computed with a single SYRK call.
// Only the upper triangle is computed by BLAS; the result is a SymDense, so
// callers that walk it should also touch only i <= j.
func Gram(x *mat.Dense) *mat.SymDense {
	r, _ := x.Dims()
	g := mat.NewSymDense(r, nil)
	GramTo(g, x)
	return g
}

// GramTo stores X Xᵀ in dst, which must be r×r for r rows of x.
func GramTo(dst *mat.SymDense, x *mat.Dense) {
	r, _ := x.Dims()
	if dst.SymmetricDim() != r {
		panic("linalg: GramTo dimension mismatch")
	}
	raw := x.RawMatrix()
	blas64.Syrk(blas.NoTrans, 1, raw, 0, dst.RawSymmetric())
}

// Cross returns X Yᵀ (rows of x against rows of y) with a single GEMM.
// x and y must have the same number of columns.
func Cross(x, y *mat.Dense) *mat.Dense {
	rx, _ := x.Dims()
	ry, _ := y.Dims()
	c := mat.NewDense(rx, ry, nil)
	c.Mul(x, y.T())
	return c
}

// RowSqNorms returns ||x_i||² for every row of x.
func RowSqNorms(x *mat.Dense) []float64 {
	raw := x.RawMatrix()
	out := make([]float64, raw.Rows)
	for i := range out {
		row := raw.Data[i*raw.Stride : i*raw.Stride+raw.Cols]
		var s float64
		for _, v := range row {
			s += v * v
		}
		out[i] = s
	}
	return out
}
