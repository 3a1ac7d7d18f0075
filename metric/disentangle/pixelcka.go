package disentangle

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/internal/tensor/linalg"
	"github.com/genlens/genlens/internal/tensor/par"
)

// Grid is the shape of one image: H rows and W columns of pixels with C
// channels each. An image is stored as one row of H·W·C numbers, pixel
// by pixel in row-major order with a pixel's channels adjacent (the
// layout of a C-order (N, H, W, C) array), so pixel p occupies columns
// p·C to p·C+C-1.
type Grid struct{ H, W, C int }

// Pixels returns H·W.
func (g Grid) Pixels() int { return g.H * g.W }

// Dim returns the length of an image row, H·W·C.
func (g Grid) Dim() int { return g.H * g.W * g.C }

func (g Grid) String() string { return fmt.Sprintf("%dx%dx%d", g.H, g.W, g.C) }

func (g Grid) check(x *mat.Dense, what string) error {
	if g.H < 1 || g.W < 1 || g.C < 1 {
		return fmt.Errorf("disentangle: invalid image grid %v", g)
	}
	if x == nil || x.IsEmpty() {
		return fmt.Errorf("disentangle: %s: no images", what)
	}
	if _, c := x.Dims(); c != g.Dim() {
		return fmt.Errorf("disentangle: %s: rows of %d values, want %d for %v images", what, c, g.Dim(), g)
	}
	return nil
}

// PixelCKA returns the P×P matrix of CKA values between the pixels of
// the images x (one image per row, laid out as Grid describes) — Gruber, Ziegler & Buettner, 2024,
// Algorithm 1, with the mini-batching of Appendix C.
//
// The images are split into consecutive batches of batch rows (a final
// partial batch is left out, as in the authors' code); on each batch the
// kernel of pixel p is the RBF exp(-gamma ||a - b||²) on the pixel's C
// channel values, and CKA(p, q) is Eq. 13 on the batch. The matrix is the
// average over batches. gamma is the one shared by the image kernel, so
// that the product of the pixel kernels is the image kernel.
//
// Computation: with v_p = vec(H K_p H) / ||H K_p H||_F, CKA(p, q) is the
// dot product <v_p, v_q>, so one batch contributes V Vᵀ — a single
// symmetric rank-k product through BLAS instead of P² separate CKAs.
// Because H K_p H is symmetric, v_p keeps only its b(b+1)/2 upper-triangle
// entries with the off-diagonal ones scaled by √2, which preserves every
// dot product and nearly halves the work. K_p - 11ᵀ (computed with expm1)
// is centred instead of K_p, which H removes anyway, so that the small
// kernel differences of a tiny gamma are not lost to cancellation
// against 1.
//
// A pixel that is constant within a batch (a background corner, say) has
// H K_p H = 0 and no defined CKA there; such batches are left out of the
// average for that pixel's pairs. A pixel constant in every batch has CKA
// 0 with every pixel, itself included, so that its row stands apart from
// those of varying pixels and all such pixels cluster together.
//
// progress, when not nil, is called after each batch with the number of
// batches done and the total. PixelCKA returns ctx's error soon (well
// within a second at 64x64 pixels) after ctx is done.
func PixelCKA(ctx context.Context, x *mat.Dense, g Grid, gamma float64, batch int, progress func(done, total int)) (*mat.SymDense, error) {
	if err := g.check(x, "pixel CKA"); err != nil {
		return nil, err
	}
	if !(gamma > 0) || math.IsInf(gamma, 0) {
		return nil, fmt.Errorf("disentangle: pixel CKA: gamma %g: want a positive number", gamma)
	}
	n, _ := x.Dims()
	if batch < 2 {
		return nil, fmt.Errorf("disentangle: pixel CKA: batch size %d: want at least 2", batch)
	}
	nb := n / batch
	if nb == 0 {
		return nil, fmt.Errorf("disentangle: pixel CKA: %d images, fewer than one batch of %d", n, batch)
	}
	P := g.Pixels()
	if err := checkMatrixSize(g, batch, 0); err != nil {
		return nil, err
	}
	L := batch * (batch + 1) / 2
	v := mat.NewDense(P, L, nil)
	sum := mat.NewSymDense(P, nil)
	defined := make([][]bool, nb)
	allDefined := true
	for b := 0; b < nb; b++ {
		xb := x.Slice(b*batch, (b+1)*batch, 0, g.Dim()).(*mat.Dense)
		var err error
		if defined[b], err = pixelVectors(ctx, v, xb, g, gamma); err != nil {
			return nil, err
		}
		for _, ok := range defined[b] {
			allDefined = allDefined && ok
		}
		if err := addGram(ctx, sum, v); err != nil {
			return nil, err
		}
		if progress != nil {
			progress(b+1, nb)
		}
	}

	// count(p, q) = number of batches where both pixels vary.
	var count *mat.SymDense
	if !allDefined {
		d := mat.NewDense(P, nb, nil)
		for b := range defined {
			for p, ok := range defined[b] {
				if ok {
					d.Set(p, b, 1)
				}
			}
		}
		count = mat.NewSymDense(P, nil)
		linalg.AddGram(count, d, 1)
	}
	raw := sum.RawSymmetric()
	for p := 0; p < P; p++ {
		row := raw.Data[p*raw.Stride : p*raw.Stride+P]
		for q := p; q < P; q++ {
			c := float64(nb)
			if count != nil {
				c = count.At(p, q)
			}
			switch {
			case c == 0:
				row[q] = 0
			case q == p:
				row[q] = 1 // <v_p, v_p> = 1 up to rounding
			default:
				row[q] /= c
			}
		}
	}
	return sum, nil
}

// pixelVectors fills row p of v with the packed, normalised, centred
// kernel matrix of pixel p on the images xb (one batch) and reports which
// pixels vary in the batch; rows of constant pixels are zero. Pixels are
// shared out in blocks, so that a cancelled ctx stops the work between
// blocks.
func pixelVectors(ctx context.Context, v, xb *mat.Dense, g Grid, gamma float64) ([]bool, error) {
	const block = 32 // pixels per piece of work
	b, _ := xb.Dims()
	P, C := g.Pixels(), g.C
	xr := xb.RawMatrix()
	vr := v.RawMatrix()
	defined := make([]bool, P)
	err := par.For(ctx, (P+block-1)/block, 0, func(_ context.Context, k int) error {
		vals := make([]float64, b*C) // the pixel's channels, image by image
		e := make([]float64, b*b)    // K - 11ᵀ, full square
		r := make([]float64, b)      // row means of e
		for p := k * block; p < min(P, (k+1)*block); p++ {
			for i := 0; i < b; i++ {
				copy(vals[i*C:(i+1)*C], xr.Data[i*xr.Stride+p*C:i*xr.Stride+p*C+C])
			}
			row := vr.Data[p*vr.Stride : p*vr.Stride+vr.Cols]
			defined[p] = centredKernel(row, vals, e, r, b, C, gamma)
		}
		return nil
	})
	return defined, err
}

// gramBudget bounds the multiply-adds of one BLAS call of addGram: about
// 0.1-0.2 s of pure-Go work on two cores, so that cancellation is seen
// well within a second even on a loaded machine (at 1<<32, half a second
// a piece, a loaded CI machine took 1.03 s). Smaller products run in one
// call.
const gramBudget = 1 << 30

// addGram does c += v vᵀ (upper triangle, as linalg.AddGram), splitting
// the columns of v into pieces of at most gramBudget multiply-adds and
// checking ctx between them.
func addGram(ctx context.Context, c *mat.SymDense, v *mat.Dense) error {
	n, k := v.Dims()
	step := max(64, gramBudget/max(1, n*n))
	for j := 0; j < k; j += step {
		if err := ctx.Err(); err != nil {
			return err
		}
		linalg.AddGram(c, v.Slice(0, n, j, min(k, j+step)).(*mat.Dense), 1)
	}
	return ctx.Err()
}

// centredKernel writes into dst the packed upper triangle of
// H (K - 11ᵀ) H / ||H K H||_F for the b points vals (C values each), with
// off-diagonal entries scaled by √2, and reports whether the points vary.
// e and r are scratch space of b² and b values.
func centredKernel(dst, vals, e, r []float64, b, C int, gamma float64) bool {
	constant := true
	for i := C; i < len(vals) && constant; i++ {
		constant = vals[i] == vals[i%C]
	}
	if constant {
		clear(dst)
		return false
	}
	for i := 0; i < b; i++ {
		e[i*b+i] = 0
		for j := i + 1; j < b; j++ {
			var d float64
			for c := 0; c < C; c++ {
				t := vals[i*C+c] - vals[j*C+c]
				d += t * t
			}
			k := math.Expm1(-gamma * d)
			e[i*b+j], e[j*b+i] = k, k
		}
	}
	linalg.CentreGram(e, b, e, b, b, r)
	k := 0
	var norm2 float64
	for i := 0; i < b; i++ {
		ei := e[i*b : i*b+b]
		c := ei[i]
		dst[k] = c
		norm2 += c * c
		k++
		for j := i + 1; j < b; j++ {
			c := math.Sqrt2 * ei[j]
			dst[k] = c
			norm2 += c * c
			k++
		}
	}
	if !(norm2 > 0) || math.IsInf(norm2, 0) {
		// Differences too small to register after rounding (gamma·d²
		// below ~1e-308): as good as constant.
		clear(dst)
		return false
	}
	s := 1 / math.Sqrt(norm2)
	for i := range dst {
		dst[i] *= s
	}
	return true
}

// RowDistances returns the Euclidean distances between the rows of the
// symmetric matrix c, the distance the authors cluster pixels with
// (scipy pdist on the rows of the CKA matrix). It uses
// ||c_i - c_j||² = ||c_i||² + ||c_j||² - 2 <c_i, c_j> with the inner
// products from one symmetric BLAS product (in pieces, checking ctx
// between them).
func RowDistances(ctx context.Context, c *mat.SymDense) (*mat.SymDense, error) {
	n := c.SymmetricDim()
	full := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			v := c.At(i, j)
			full.Set(i, j, v)
			full.Set(j, i, v)
		}
	}
	g := mat.NewSymDense(n, nil)
	if err := addGram(ctx, g, full); err != nil {
		return nil, err
	}
	linalg.SqDistFromGram(g)
	raw := g.RawSymmetric()
	for i := 0; i < n; i++ {
		row := raw.Data[i*raw.Stride+i+1 : i*raw.Stride+n]
		for j, v := range row {
			row[j] = math.Sqrt(v)
		}
	}
	return g, nil
}
