package kernel

import (
	"context"
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/internal/tensor/linalg"
	"github.com/genlens/genlens/internal/tensor/par"
)

// Kernel is a positive semi-definite kernel on vectors, the rows of a matrix.
type Kernel interface {
	// Gram returns the symmetric matrix K with K[i][j] = k(x_i, x_j).
	Gram(x *mat.Dense) *mat.SymDense
	// Cross returns the matrix K with K[i][j] = k(x_i, y_j).
	Cross(x, y *mat.Dense) *mat.Dense
	// String names the kernel and its parameters, e.g. "rbf(gamma=0.0026)".
	String() string
}

// RBF is the Gaussian kernel exp(-Gamma ||x - y||²).
type RBF struct{ Gamma float64 }

// Laplacian is the kernel exp(-Gamma ||x - y||₁).
type Laplacian struct{ Gamma float64 }

// Polynomial is the kernel (Gamma <x, y> + Coef0)^Degree, scikit-learn's
// parametrisation. KID uses Gamma = 1/d, Coef0 = 1, Degree = 3; the
// ((<x,y> + 1)/784)³ of Gruber & Buettner (ICML 2024) is Gamma = Coef0 =
// 1/784, Degree = 3.
type Polynomial struct {
	Gamma, Coef0 float64
	Degree       int
}

// Cosine is the cosine similarity <x, y> / (||x|| ||y||). A zero vector has
// similarity 0 with everything, itself included, which keeps the kernel
// positive semi-definite (its feature map sends 0 to 0).
type Cosine struct{}

// Linear is the dot product <x, y>.
type Linear struct{}

func (k RBF) String() string       { return fmt.Sprintf("rbf(gamma=%.6g)", k.Gamma) }
func (k Laplacian) String() string { return fmt.Sprintf("laplacian(gamma=%.6g)", k.Gamma) }
func (k Polynomial) String() string {
	return fmt.Sprintf("poly(gamma=%.6g, coef0=%.6g, degree=%d)", k.Gamma, k.Coef0, k.Degree)
}
func (Cosine) String() string { return "cosine" }
func (Linear) String() string { return "linear" }

// Gram implements Kernel. Rows with a large common offset are centred
// first (see centred).
func (k RBF) Gram(x *mat.Dense) *mat.SymDense {
	g := linalg.Gram(centred(x, offsetMeans(x)))
	k.fromGram(g)
	return g
}

// GramContext is Gram through linalg.GramContext: it stops, with ctx's
// error, between blocks of rows of the product once ctx is done. Up to
// a block of rows it is Gram bit for bit; above, to rounding.
func (k RBF) GramContext(ctx context.Context, x *mat.Dense) (*mat.SymDense, error) {
	g, err := linalg.GramContext(ctx, centred(x, offsetMeans(x)))
	if err != nil {
		return nil, err
	}
	k.fromGram(g)
	return g, nil
}

// fromGram turns the Gram matrix g of (centred) rows into their kernel
// matrix in place.
func (k RBF) fromGram(g *mat.SymDense) {
	raw := g.RawSymmetric()
	n := raw.N
	// Squared norms come from the Gram diagonal; read them before the
	// element-wise pass overwrites it.
	sq := make([]float64, n)
	for i := range sq {
		sq[i] = raw.Data[i*raw.Stride+i]
	}
	gamma := k.Gamma
	parallelRows(n, n*n/2, func(i int) {
		row := raw.Data[i*raw.Stride : i*raw.Stride+n]
		row[i] = 1
		si := sq[i]
		for j := i + 1; j < n; j++ {
			d := si + sq[j] - 2*row[j]
			if d < 0 { // rounding: the distance of near-equal rows
				d = 0
			}
			row[j] = math.Exp(-gamma * d)
		}
	})
}

// Cross implements Kernel. When x's rows share a large offset, both sets
// are centred on x's mean first (see centred).
func (k RBF) Cross(x, y *mat.Dense) *mat.Dense {
	m := offsetMeans(x)
	x, y = centred(x, m), centred(y, m)
	c := linalg.Cross(x, y)
	sx, sy := linalg.RowSqNorms(x), linalg.RowSqNorms(y)
	raw := c.RawMatrix()
	gamma := k.Gamma
	parallelRows(raw.Rows, raw.Rows*raw.Cols, func(i int) {
		row := raw.Data[i*raw.Stride : i*raw.Stride+raw.Cols]
		for j, v := range row {
			d := sx[i] + sy[j] - 2*v
			if d < 0 {
				d = 0
			}
			row[j] = math.Exp(-gamma * d)
		}
	})
	return c
}

// Gram implements Kernel.
func (k Laplacian) Gram(x *mat.Dense) *mat.SymDense {
	rx := x.RawMatrix()
	n := rx.Rows
	g := mat.NewSymDense(n, nil)
	raw := g.RawSymmetric()
	parallelRows(n, n*n*rx.Cols/2, func(i int) {
		xi := rx.Data[i*rx.Stride : i*rx.Stride+rx.Cols]
		row := raw.Data[i*raw.Stride : i*raw.Stride+n]
		row[i] = 1
		for j := i + 1; j < n; j++ {
			row[j] = math.Exp(-k.Gamma * l1(xi, rx.Data[j*rx.Stride:j*rx.Stride+rx.Cols]))
		}
	})
	return g
}

// Cross implements Kernel.
func (k Laplacian) Cross(x, y *mat.Dense) *mat.Dense {
	rx, ry := x.RawMatrix(), y.RawMatrix()
	c := mat.NewDense(rx.Rows, ry.Rows, nil)
	raw := c.RawMatrix()
	parallelRows(rx.Rows, rx.Rows*ry.Rows*rx.Cols, func(i int) {
		xi := rx.Data[i*rx.Stride : i*rx.Stride+rx.Cols]
		row := raw.Data[i*raw.Stride : i*raw.Stride+raw.Cols]
		for j := range row {
			row[j] = math.Exp(-k.Gamma * l1(xi, ry.Data[j*ry.Stride:j*ry.Stride+ry.Cols]))
		}
	})
	return c
}

func l1(a, b []float64) float64 {
	b = b[:len(a)]
	var s float64
	for i, v := range a {
		s += math.Abs(v - b[i])
	}
	return s
}

// Gram implements Kernel.
func (k Polynomial) Gram(x *mat.Dense) *mat.SymDense {
	g := linalg.Gram(x)
	mapUpper(g, func(v float64) float64 { return k.apply(v) })
	return g
}

// Cross implements Kernel.
func (k Polynomial) Cross(x, y *mat.Dense) *mat.Dense {
	c := linalg.Cross(x, y)
	mapDense(c, k.apply)
	return c
}

func (k Polynomial) apply(dot float64) float64 {
	b := k.Gamma*dot + k.Coef0
	switch k.Degree {
	case 1:
		return b
	case 2:
		return b * b
	case 3:
		return b * b * b
	}
	return math.Pow(b, float64(k.Degree))
}

// Gram implements Kernel.
func (Cosine) Gram(x *mat.Dense) *mat.SymDense {
	g := linalg.Gram(x)
	raw := g.RawSymmetric()
	n := raw.N
	inv := make([]float64, n)
	for i := range inv {
		if d := raw.Data[i*raw.Stride+i]; d > 0 {
			inv[i] = 1 / math.Sqrt(d)
		}
	}
	for i := 0; i < n; i++ {
		row := raw.Data[i*raw.Stride : i*raw.Stride+n]
		for j := i; j < n; j++ {
			row[j] *= inv[i] * inv[j]
		}
		if inv[i] > 0 {
			row[i] = 1 // exactly, not 1 ± rounding
		}
	}
	return g
}

// Cross implements Kernel.
func (Cosine) Cross(x, y *mat.Dense) *mat.Dense {
	c := linalg.Cross(x, y)
	ix, iy := invNorms(x), invNorms(y)
	raw := c.RawMatrix()
	for i := 0; i < raw.Rows; i++ {
		row := raw.Data[i*raw.Stride : i*raw.Stride+raw.Cols]
		for j := range row {
			row[j] *= ix[i] * iy[j]
		}
	}
	return c
}

func invNorms(x *mat.Dense) []float64 {
	sq := linalg.RowSqNorms(x)
	for i, v := range sq {
		if v > 0 {
			sq[i] = 1 / math.Sqrt(v)
		}
	}
	return sq
}

// Gram implements Kernel.
func (Linear) Gram(x *mat.Dense) *mat.SymDense { return linalg.Gram(x) }

// GramContext is Gram through linalg.GramContext: it stops, with ctx's
// error, between blocks of rows once ctx is done.
func (Linear) GramContext(ctx context.Context, x *mat.Dense) (*mat.SymDense, error) {
	return linalg.GramContext(ctx, x)
}

// Cross implements Kernel.
func (Linear) Cross(x, y *mat.Dense) *mat.Dense { return linalg.Cross(x, y) }

func mapUpper(g *mat.SymDense, f func(float64) float64) {
	raw := g.RawSymmetric()
	n := raw.N
	parallelRows(n, n*n/2, func(i int) {
		row := raw.Data[i*raw.Stride : i*raw.Stride+n]
		for j := i; j < n; j++ {
			row[j] = f(row[j])
		}
	})
}

func mapDense(c *mat.Dense, f func(float64) float64) {
	raw := c.RawMatrix()
	parallelRows(raw.Rows, raw.Rows*raw.Cols, func(i int) {
		row := raw.Data[i*raw.Stride : i*raw.Stride+raw.Cols]
		for j, v := range row {
			row[j] = f(v)
		}
	})
}

// parallelRows calls f(i) for i in [0, n), spreading rows over the CPUs
// through par.For when the total work is large enough to pay for the
// goroutines. Rows are handed out one at a time, which balances the
// triangular loops of the Gram matrices (row i has n-i entries). Each row
// is written by one call only, so the result does not depend on the
// number of workers. The kernels have no context (Kernel is a plain
// interface); callers bound the work per call instead (kscore computes
// one panel of rows at a time and checks its context between panels).
func parallelRows(n, work int, f func(i int)) {
	if work < 1<<16 || n < 2 {
		for i := 0; i < n; i++ {
			f(i)
		}
		return
	}
	err := par.For(context.Background(), n, 0, func(_ context.Context, i int) error {
		f(i)
		return nil
	})
	var pe *par.PanicError
	if errors.As(err, &pe) {
		// A bug in f: panic again on the caller's goroutine, where the
		// caller's recovery (if any) sees it, as before the fan-out.
		panic(fmt.Sprintf("%v\n%s", pe.Value, pe.Stack))
	}
}

// offsetMeans returns the mean of x's rows when they share an offset
// large enough to cost the distance identity more than three digits
// (squared norm of the mean over 1000 times the total variance), and nil
// otherwise: centring then changes nothing but the last bits, which would
// make results differ from earlier releases and from other tools for no
// gain.
func offsetMeans(x *mat.Dense) []float64 {
	r, c := x.Dims()
	m := make([]float64, c)
	for i := 0; i < r; i++ {
		for j, v := range x.RawRowView(i) {
			m[j] += v
		}
	}
	var mm float64
	for j := range m {
		m[j] /= float64(r)
		mm += m[j] * m[j]
	}
	var ss float64
	for i := 0; i < r; i++ {
		for j, v := range x.RawRowView(i) {
			ss += (v - m[j]) * (v - m[j])
		}
	}
	if !(mm > 1000*ss/float64(r)) {
		return nil
	}
	return m
}

// centred returns x with m subtracted from every row (a copy), or x
// itself when m is nil.
//
// Squared distances are computed as ||x||² + ||y||² - 2 x·y, one GEMM for
// all pairs. That identity cancels catastrophically when the rows share a
// large offset: with +1e8 on every feature the norms are 1e16 and the
// distances of order 1 lose every digit (MMD² fell from 0.071 to 0.060,
// and at +1e12 the median rule found every distance zero). Distances do
// not change under a common shift, so translation-invariant kernels
// shift such rows to their mean first, where the identity is accurate.
func centred(x *mat.Dense, m []float64) *mat.Dense {
	if m == nil {
		return x
	}
	r, c := x.Dims()
	out := mat.NewDense(r, c, nil)
	for i := 0; i < r; i++ {
		src, dst := x.RawRowView(i), out.RawRowView(i)
		for j, v := range src {
			dst[j] = v - m[j]
		}
	}
	return out
}
