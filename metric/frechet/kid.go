package frechet

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/internal/tensor/membudget"
	"github.com/genlens/genlens/metric/kernel"
	"github.com/genlens/genlens/metric/kscore"
)

// KID defaults from Bińkowski et al. and torch-fidelity.
const (
	KIDSubsets    = 100
	KIDSubsetSize = 1000
)

// kidStream is the second PCG seed word, fixed so that a user's seed alone
// determines the subsets.
const kidStream = 0x4b4944 // "KID"

// KID returns the Kernel Inception Distance of Bińkowski et al. (2018): the
// mean and standard deviation over `subsets` random subsets of the unbiased
// MMD² between rows of x and y with the cubic polynomial kernel
// k(a, b) = (aᵀb/d + 1)³ (kernel.Polynomial{Gamma: 1/d, Coef0: 1,
// Degree: 3}, computed by kscore.MMD2).
//
// Each subset draws size rows of x and then size rows of y, each without
// replacement, independently of the other subsets, as torch-fidelity does;
// a size above n_x or n_y is an error there and here (capping it would
// give another number than torch-fidelity's for the same settings). With
// size equal to a side's row count every subset of that side is the whole
// side, and with both the standard deviation is 0. The draws come from
// math/rand/v2's PCG seeded with seed, so equal seeds give equal results.
// The standard deviation is the population one (ddof 0), as torch-fidelity's
// np.std. The mean can be negative: the estimator is unbiased, and two
// samples of one distribution give values scattered around 0.
//
// When x and y together have at most 8192 rows and that is cheaper than
// the subsets (n² < 4·subsets·m²), the kernel matrix of all rows is
// computed once and each subset only sums entries of it; the numbers are
// the same up to rounding.
//
// Rows that share a large offset (kernel.Offset) are computed around it
// with kernel.Shifted: the same estimate in exact arithmetic, where the
// kernel values themselves (about A³ with A = γ|offset|² + 1) would leave
// no digit of their differences. The cubic kernel is not translation
// invariant, so the value still depends on the offset, as it must.
//
// ctx is checked before every subset, so a cancelled KID stops within one
// subset's work (2 m² d multiply-adds) and returns ctx.Err().
func KID(ctx context.Context, x, y *mat.Dense, subsets, size int, seed uint64) (mean, std float64, err error) {
	return KIDProgress(ctx, x, y, subsets, size, seed, nil)
}

// KIDProgress is KID reporting its work through progress (when not nil):
// done out of total steps, one per subset plus, when the whole kernel
// matrix is computed first, one per strip of its rows.
func KIDProgress(ctx context.Context, x, y *mat.Dense, subsets, size int, seed uint64, progress func(done, total int)) (mean, std float64, err error) {
	nx, d := x.Dims()
	ny, dy := y.Dims()
	if d != dy {
		return math.NaN(), math.NaN(), fmt.Errorf("frechet: KID: dimension mismatch: %d and %d", d, dy)
	}
	if subsets < 1 {
		return math.NaN(), math.NaN(), fmt.Errorf("frechet: KID: %d subsets (want at least 1)", subsets)
	}
	m := size
	if m < 2 {
		return math.NaN(), math.NaN(), fmt.Errorf("frechet: KID: subset size %d; the unbiased MMD² needs at least 2 rows", m)
	}
	if m > min(nx, ny) {
		return math.NaN(), math.NaN(), fmt.Errorf("frechet: KID: subset size %d is more than the %d rows of x or the %d rows of y (subsets are drawn without replacement)", m, nx, ny)
	}
	k := kernel.Polynomial{Gamma: 1 / float64(d), Coef0: 1, Degree: 3}
	rng := rand.New(rand.NewPCG(seed, kidStream))
	px, py := identity(nx), identity(ny)
	vals := make([]float64, subsets)
	done, total := 0, subsets
	step := func() {
		if progress != nil {
			done++
			progress(done, total)
		}
	}
	// The whole kernel matrix when it saves work and fits the memory
	// budget; otherwise subset by subset (each through kscore's check).
	if n := nx + ny; n <= kidGramLimit && n*n < 4*subsets*m*m && membudget.Check("KID's kernel matrix", 1, n, n) == nil {
		total += gramStrips(n)
		if progress != nil {
			progress(0, total)
		}
		// Every subset reads the kernel between rows of the same two
		// sets: computing it once for all n rows costs n² d / 2
		// multiply-adds against 2 m² d per subset (n = 2000 with 100
		// subsets of 1000: 50 times less work).
		g, err := polyGram(ctx, x, y, k, step)
		if err != nil {
			return math.NaN(), math.NaN(), err
		}
		ix, iy := make([]int, m), make([]int, m)
		for s := range vals {
			if err := ctx.Err(); err != nil {
				return math.NaN(), math.NaN(), err
			}
			copy(ix, sample(rng, px, m))
			copy(iy, sample(rng, py, m))
			vals[s] = mmd2Indexed(g, nx, ix, iy)
			step()
		}
	} else {
		if progress != nil {
			progress(0, total)
		}
		xs, ys := mat.NewDense(m, d, nil), mat.NewDense(m, d, nil)
		for s := range vals {
			if err := ctx.Err(); err != nil {
				return math.NaN(), math.NaN(), err
			}
			gather(xs, x, sample(rng, px, m))
			gather(ys, y, sample(rng, py, m))
			if vals[s], err = kscore.MMD2(k, xs, ys); err != nil {
				return math.NaN(), math.NaN(), fmt.Errorf("frechet: KID: %w", err)
			}
			step()
		}
	}
	mean, std = meanStd(vals)
	return mean, std, nil
}

// kidGramLimit bounds the rows of x and y together for which KID
// precomputes the whole kernel matrix (8192² float64 = 512 MiB). It is a
// variable so that tests can force either path.
var kidGramLimit = 8192

// polyGram returns the kernel matrix of the rows of x stacked on the rows
// of y, upper triangle only; for rows with a large common offset, the
// matrix of kernel.Shifted's h instead, whose subset MMD²s are the same. It computes the products in strips of rows,
// checking ctx between strips: at n = 8192 and d = 2048 the whole matrix
// is about 70 GFLOP, many seconds without OpenBLAS.
func polyGram(ctx context.Context, x, y *mat.Dense, k kernel.Polynomial, step func()) (*mat.SymDense, error) {
	nx, d := x.Dims()
	ny, _ := y.Dims()
	n := nx + ny
	st := mat.NewDense(n, d, nil)
	st.Slice(0, nx, 0, d).(*mat.Dense).Copy(x)
	st.Slice(nx, n, 0, d).(*mat.Dense).Copy(y)
	// Rows with a large common offset: the kernel around it (see
	// kernel.Shifted), whose subset MMD²s are the same numbers computed
	// without losing their digits.
	var sh *kernel.Shifted
	var proj []float64
	if c := kernel.Offset(x, y); c != nil {
		s := k.Shift(c)
		sh, proj = &s, make([]float64, n)
		for i := range n {
			row := st.RawRowView(i)
			for j := range row {
				row[j] -= c[j]
			}
			proj[i] = s.Proj(row)
		}
	}
	g := mat.NewSymDense(n, nil)
	raw, t := g.RawSymmetric(), st.RawMatrix()
	strip := gramStrip()
	for i0 := 0; i0 < n; i0 += strip {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		i1 := min(i0+strip, n)
		a := blas64.General{Rows: i1 - i0, Cols: d, Stride: t.Stride, Data: t.Data[i0*t.Stride:]}
		if fastBLAS {
			// The diagonal block by Syrk, the rest of the strip's rows
			// by Gemm: no flops below the diagonal.
			blas64.Syrk(blas.NoTrans, 1, a, 0, blas64.Symmetric{Uplo: blas.Upper, N: i1 - i0, Stride: raw.Stride, Data: raw.Data[i0*raw.Stride+i0:]})
			if i1 < n {
				b := blas64.General{Rows: n - i1, Cols: d, Stride: t.Stride, Data: t.Data[i1*t.Stride:]}
				c := blas64.General{Rows: i1 - i0, Cols: n - i1, Stride: raw.Stride, Data: raw.Data[i0*raw.Stride+i1:]}
				blas64.Gemm(blas.NoTrans, blas.Trans, 1, a, b, 0, c)
			}
		} else {
			// Rows i0..i1 against rows i0..n at Gemm speed (gonum's
			// Syrk is slower), with a corner below the diagonal that
			// is ignored.
			b := blas64.General{Rows: n - i0, Cols: d, Stride: t.Stride, Data: t.Data[i0*t.Stride:]}
			c := blas64.General{Rows: i1 - i0, Cols: n - i0, Stride: raw.Stride, Data: raw.Data[i0*raw.Stride+i0:]}
			blas64.Gemm(blas.NoTrans, blas.Trans, 1, a, b, 0, c)
		}
		for i := i0; i < i1; i++ {
			row := raw.Data[i*raw.Stride+i : i*raw.Stride+n]
			if sh != nil {
				for j, v := range row {
					row[j] = sh.Excess(k.Gamma*v, proj[i], proj[i+j])
				}
				continue
			}
			for j, v := range row {
				b := k.Gamma*v + k.Coef0
				row[j] = b * b * b
			}
		}
		step()
	}
	return g, nil
}

// gramStrip is the number of rows polyGram computes at a time.
func gramStrip() int {
	if fastBLAS {
		return 512 // a tuned BLAS does a strip of 512 x 8192 x 2048 in well under a second
	}
	return 128
}

// gramStrips is the number of strips of polyGram for n rows.
func gramStrips(n int) int { return (n + gramStrip() - 1) / gramStrip() }

// mmd2Indexed is the unbiased MMD² between rows ix of x and rows iy of y,
// read from the kernel matrix g of x stacked on y (x has nx rows). Indices
// are sorted first so each row of g is read in increasing column order.
func mmd2Indexed(g *mat.SymDense, nx int, ix, iy []int) float64 {
	slices.Sort(ix)
	slices.Sort(iy)
	raw := g.RawSymmetric()
	within := func(idx []int, off int) float64 {
		var s float64
		for a, i := range idx {
			row := raw.Data[(i+off)*raw.Stride:]
			for _, j := range idx[a+1:] {
				s += row[j+off]
			}
		}
		m := float64(len(idx))
		return 2 * s / (m * (m - 1))
	}
	var cross float64
	for _, i := range ix {
		row := raw.Data[i*raw.Stride:]
		for _, j := range iy {
			cross += row[nx+j]
		}
	}
	return within(ix, 0) + within(iy, nx) - 2*cross/float64(len(ix)*len(iy))
}

func identity(n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	return p
}

// sample returns m distinct indices, uniformly at random, by a partial
// Fisher-Yates shuffle of perm (whose order on entry does not matter).
func sample(rng *rand.Rand, perm []int, m int) []int {
	for i := 0; i < m; i++ {
		j := i + rng.IntN(len(perm)-i)
		perm[i], perm[j] = perm[j], perm[i]
	}
	return perm[:m]
}

// gather copies rows idx of src into dst.
func gather(dst, src *mat.Dense, idx []int) {
	for i, r := range idx {
		dst.SetRow(i, src.RawRowView(r))
	}
}
