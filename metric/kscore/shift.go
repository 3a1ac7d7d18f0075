package kscore

import (
	"context"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/internal/tensor/linalg"
	"github.com/genlens/genlens/internal/tensor/par"
	"github.com/genlens/genlens/metric/kernel"
)

// shiftedKernel evaluates kernel.Shifted's h on augmented rows [u, a]: a
// row centred on the shift followed by its projection a = γ c·u. It is
// not a kernel (h is not positive semidefinite), only the thing whose
// within and between means give the same MMD² as the kernel it stands for.
type shiftedKernel struct {
	s kernel.Shifted
	d int // columns of u
}

// shiftable returns the shifted form of a linear or polynomial kernel k
// when the rows of x and y share a large offset.
func shiftable(k kernel.Kernel, x, y *mat.Dense) (shiftedKernel, bool) {
	var p kernel.Polynomial
	switch k := k.(type) {
	case kernel.Polynomial:
		p = k
	case kernel.Linear:
		p = kernel.Polynomial{Gamma: 1, Coef0: 0, Degree: 1}
	default:
		return shiftedKernel{}, false
	}
	if _, cx := x.Dims(); cx == 0 || p.Degree < 1 {
		return shiftedKernel{}, false
	}
	if _, cy := y.Dims(); cy != len(x.RawRowView(0)) {
		return shiftedKernel{}, false // newSums reports the mismatch
	}
	c := kernel.Offset(x, y)
	if c == nil {
		return shiftedKernel{}, false
	}
	return shiftedKernel{s: p.Shift(c), d: len(c)}, true
}

// augment returns the rows of x centred on the shift, each followed by its
// projection on it.
func (k shiftedKernel) augment(x *mat.Dense) *mat.Dense {
	r, _ := x.Dims()
	out := mat.NewDense(r, k.d+1, nil)
	for i := 0; i < r; i++ {
		src, dst := x.RawRowView(i), out.RawRowView(i)
		for j, v := range src {
			dst[j] = v - k.s.C[j]
		}
		dst[k.d] = k.s.Proj(dst[:k.d])
	}
	return out
}

func (k shiftedKernel) Gram(x *mat.Dense) *mat.SymDense {
	r, _ := x.Dims()
	g := mat.NewSymDense(r, nil)
	c := k.Cross(x, x)
	for i := 0; i < r; i++ {
		for j := i; j < r; j++ {
			g.SetSym(i, j, c.At(i, j))
		}
	}
	return g
}

func (k shiftedKernel) Cross(x, y *mat.Dense) *mat.Dense {
	rx, ry := x.RawMatrix(), y.RawMatrix()
	c := linalg.Cross(x.Slice(0, rx.Rows, 0, k.d).(*mat.Dense), y.Slice(0, ry.Rows, 0, k.d).(*mat.Dense))
	raw := c.RawMatrix()
	b := make([]float64, ry.Rows)
	for j := range b {
		b[j] = ry.Data[j*ry.Stride+k.d]
	}
	gamma := k.s.K.Gamma
	// Rows are independent: spread them over the CPUs as the kernels'
	// own element-wise maps do.
	_ = par.For(context.Background(), raw.Rows, 0, func(_ context.Context, i int) error {
		a := rx.Data[i*rx.Stride+k.d]
		row := raw.Data[i*raw.Stride : i*raw.Stride+raw.Cols]
		for j, v := range row {
			row[j] = k.s.Excess(gamma*v, a, b[j])
		}
		return nil
	})
	return c
}

func (k shiftedKernel) String() string { return k.s.K.String() + " around an offset" }
