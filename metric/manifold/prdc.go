package manifold

import (
	"context"
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/internal/tensor/par"
)

// DefaultK is the number of nearest neighbours of compute_prdc's examples
// and of Naeem et al.'s experiments.
const DefaultK = 5

// PRDC holds the four scores of one comparison.
type PRDC struct {
	Precision, Recall, Density, Coverage float64
}

// Block sizes of the distance products: rowBlock rows of one set against
// colBlock rows of the other, one GEMM of rowBlock×colBlock×d per block
// (4 MB of float64 per goroutine); the symmetric passes use square tiles
// of rowBlock.
const (
	rowBlock = 512
	colBlock = 1024
)

// Compute returns precision, recall, density and coverage of the fake rows
// against the real rows with k nearest neighbours. Both sets need more
// than k rows, of one dimension, and finite values. ctx is checked
// between row blocks.
func Compute(ctx context.Context, real, fake *mat.Dense, k int) (PRDC, error) {
	return ComputeProgress(ctx, real, fake, k, nil)
}

// ComputeProgress is Compute reporting done out of total blocks through
// progress (when not nil), over its three passes.
func ComputeProgress(ctx context.Context, real, fake *mat.Dense, k int, progress func(done, total int)) (PRDC, error) {
	nr, d := real.Dims()
	nf, df := fake.Dims()
	switch {
	case d != df:
		return PRDC{}, fmt.Errorf("manifold: dimension mismatch: real %d, fake %d", d, df)
	case k < 1:
		return PRDC{}, fmt.Errorf("manifold: k = %d: want at least 1", k)
	case nr <= k || nf <= k:
		return PRDC{}, fmt.Errorf("manifold: %d real and %d fake rows: k = %d needs more than k rows in each", nr, nf, k)
	}
	for _, x := range []*mat.Dense{real, fake} {
		if err := finite(x); err != nil {
			return PRDC{}, err
		}
	}
	blocks := func(n int) int { return (n + rowBlock - 1) / rowBlock }
	tiles := func(n int) int { b := blocks(n); return b * (b + 1) / 2 }
	total := tiles(nr) + tiles(nf) + blocks(nr)
	// Blocks finish on several goroutines; the count is reported under a
	// lock so that it only grows.
	var mu sync.Mutex
	done := 0
	tick := func() {
		if progress != nil {
			mu.Lock()
			done++
			progress(done, total)
			mu.Unlock()
		}
	}
	if progress != nil {
		progress(0, total)
	}
	rr, err := radii2(ctx, real, k, tick)
	if err != nil {
		return PRDC{}, err
	}
	fr, err := radii2(ctx, fake, k, tick)
	if err != nil {
		return PRDC{}, err
	}
	return cross(ctx, real, fake, rr, fr, k, tick)
}

// Radii returns, for every row of x, its distance to its k-th nearest
// neighbour among the rows of x: the (k+1)-th smallest distance counting
// the row itself at 0.
func Radii(ctx context.Context, x *mat.Dense, k int) ([]float64, error) {
	n, _ := x.Dims()
	if k < 1 || n <= k {
		return nil, fmt.Errorf("manifold: %d rows: k = %d needs 1 <= k < rows", n, k)
	}
	if err := finite(x); err != nil {
		return nil, err
	}
	r2, err := radii2(ctx, x, k, func() {})
	if err != nil {
		return nil, err
	}
	r := make([]float64, n)
	for i, v := range r2 {
		r[i] = math.Sqrt(v)
	}
	return r, nil
}

func finite(x *mat.Dense) error {
	raw := x.RawMatrix()
	for i := 0; i < raw.Rows; i++ {
		for j, v := range raw.Data[i*raw.Stride : i*raw.Stride+raw.Cols] {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("manifold: row %d column %d is %v", i, j, v)
			}
		}
	}
	return nil
}

// sqDist is the squared Euclidean distance summed in order. The explicit
// float64 conversion keeps the compiler from fusing the multiply and the
// add, so the value is the same on every platform and build.
func sqDist(a, b []float64) float64 {
	var s float64
	for k, v := range a {
		t := v - b[k]
		s += float64(t * t)
	}
	return s
}

// sqNorms returns ‖x_i‖² for every row.
func sqNorms(x *mat.Dense) []float64 {
	raw := x.RawMatrix()
	out := make([]float64, raw.Rows)
	for i := range out {
		var s float64
		for _, v := range raw.Data[i*raw.Stride : i*raw.Stride+raw.Cols] {
			s += float64(v * v)
		}
		out[i] = s
	}
	return out
}

// errScale returns the factor c such that a squared distance computed as
// ‖x‖² + ‖y‖² − 2 x·y, with the norms and the dot product each summed in
// any order over d terms, is within c·(‖x‖² + ‖y‖²) of the exact value:
// each sum is off by at most about d·u times its absolute terms (u the
// unit roundoff), and |x·y| ≤ (‖x‖² + ‖y‖²)/2. A factor of 4 covers the
// higher-order terms and the final additions with room to spare.
func errScale(d int) float64 {
	const u = 0x1p-53
	return 4 * float64(d+2) * u
}

// gemmBlock sets c to the rows [i0, i1) of x times the rows [j0, j1) of y
// transposed, in a buffer of at least rowBlock×colBlock.
func gemmBlock(buf []float64, x, y *mat.Dense, i0, i1, j0, j1 int) *mat.Dense {
	c := mat.NewDense(i1-i0, j1-j0, buf[:(i1-i0)*(j1-j0)])
	c.Mul(x.Slice(i0, i1, 0, x.RawMatrix().Cols), y.Slice(j0, j1, 0, y.RawMatrix().Cols).T())
	return c
}

// radii2 returns the squared k-NN radius of every row of x: the (k+1)-th
// smallest exact squared distance to the rows of x, itself included. Each
// row keeps the k+1 smallest exact values seen so far (a max-heap); a
// column is computed exactly only when its GEMM estimate, less its error
// bound, could beat the heap's largest. Distances are symmetric, so only
// the tiles on and above the diagonal are multiplied; a tile updates the
// heaps of its rows and, transposed, those of its columns, under one lock
// per row block at a time.
func radii2(ctx context.Context, x *mat.Dense, k int, tick func()) ([]float64, error) {
	n, d := x.Dims()
	sq := sqNorms(x)
	es := errScale(d)
	nb := (n + rowBlock - 1) / rowBlock
	heaps := make([][]float64, n)
	for i := range heaps {
		heaps[i] = make([]float64, 0, k+1)
	}
	locks := make([]sync.Mutex, nb)
	type tile struct{ bi, bj int }
	var tiles []tile
	for bi := 0; bi < nb; bi++ {
		for bj := bi; bj < nb; bj++ {
			tiles = append(tiles, tile{bi, bj})
		}
	}
	// update offers the pairs (i, j) of the tile to the heaps of rows i in
	// [i0, i1); at(i, j) is the tile's GEMM entry for that pair.
	update := func(i0, i1, j0, j1 int, at func(i, j int) float64) {
		for i := i0; i < i1; i++ {
			h := heaps[i]
			xi := x.RawRowView(i)
			for j := j0; j < j1; j++ {
				if len(h) == k+1 {
					est := sq[i] + sq[j] - 2*at(i, j)
					if est-es*(sq[i]+sq[j]) > h[0] {
						continue
					}
				}
				v := 0.0
				if j != i {
					v = sqDist(xi, x.RawRowView(j))
				}
				h = pushMax(h, v, k+1)
			}
			heaps[i] = h
		}
	}
	err := par.For(ctx, len(tiles), 0, func(ctx context.Context, t int) error {
		bi, bj := tiles[t].bi, tiles[t].bj
		i0, i1 := bi*rowBlock, min((bi+1)*rowBlock, n)
		j0, j1 := bj*rowBlock, min((bj+1)*rowBlock, n)
		c := gemmBlock(make([]float64, rowBlock*rowBlock), x, x, i0, i1, j0, j1)
		raw := c.RawMatrix()
		locks[bi].Lock()
		update(i0, i1, j0, j1, func(i, j int) float64 { return raw.Data[(i-i0)*raw.Stride+j-j0] })
		locks[bi].Unlock()
		if bj != bi {
			locks[bj].Lock()
			update(j0, j1, i0, i1, func(j, i int) float64 { return raw.Data[(i-i0)*raw.Stride+j-j0] })
			locks[bj].Unlock()
		}
		tick()
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]float64, n)
	for i, h := range heaps {
		out[i] = h[0]
	}
	return out, nil
}

// pushMax adds v to the max-heap h of at most size values, dropping the
// largest when full.
func pushMax(h []float64, v float64, size int) []float64 {
	if len(h) < size {
		h = append(h, v)
		for i := len(h) - 1; i > 0; {
			p := (i - 1) / 2
			if h[p] >= h[i] {
				break
			}
			h[p], h[i] = h[i], h[p]
			i = p
		}
		return h
	}
	if v >= h[0] {
		return h
	}
	h[0] = v
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(h) && h[l] > h[m] {
			m = l
		}
		if r < len(h) && h[r] > h[m] {
			m = r
		}
		if m == i {
			return h
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

// decide compares d(a, b) with √r2 for the squared radius r2 from the
// GEMM estimate est of d(a, b)² and its error bound e: sure is false when
// the estimate cannot settle it. The margin 8u·r2 covers the rounding of
// the square roots: a squared distance that far from r2 keeps its order
// through them.
func decide(est, e, r2 float64) (lt, sure bool) {
	const margin = 8 * 0x1p-53
	switch {
	case est+e < r2*(1-margin):
		return true, true
	case est-e > r2*(1+margin):
		return false, true
	}
	return false, false
}

// lessExact is the plain definition: the float64 distance against the
// float64 radius.
func lessExact(s2, r2 float64) bool { return math.Sqrt(s2) < math.Sqrt(r2) }

// cross runs the real×fake pass: counts of real balls containing each fake
// row (density, precision), and for each real row whether its ball holds a
// fake row (coverage) and whether it lies in some fake ball (recall).
func cross(ctx context.Context, real, fake *mat.Dense, rr, fr []float64, k int, tick func()) (PRDC, error) {
	nr, d := real.Dims()
	nf, _ := fake.Dims()
	sr, sf := sqNorms(real), sqNorms(fake)
	es := errScale(d)
	count := make([]atomic.Int32, nf)
	covered := make([]bool, nr)
	recalled := make([]bool, nr)
	nb := (nr + rowBlock - 1) / rowBlock
	err := par.For(ctx, nb, 0, func(ctx context.Context, b int) error {
		i0, i1 := b*rowBlock, min((b+1)*rowBlock, nr)
		buf := make([]float64, rowBlock*colBlock)
		for j0 := 0; j0 < nf; j0 += colBlock {
			if err := ctx.Err(); err != nil {
				return err
			}
			j1 := min(j0+colBlock, nf)
			c := gemmBlock(buf, real, fake, i0, i1, j0, j1)
			for i := i0; i < i1; i++ {
				xi := real.RawRowView(i)
				row := c.RawRowView(i - i0)
				for j := j0; j < j1; j++ {
					est := sr[i] + sf[j] - 2*row[j-j0]
					e := es * (sr[i] + sf[j])
					exact := -1.0 // computed at most once, when a decision needs it
					in, sure := decide(est, e, rr[i])
					if !sure {
						exact = sqDist(xi, fake.RawRowView(j))
						in = lessExact(exact, rr[i])
					}
					if in {
						count[j].Add(1)
						covered[i] = true
					}
					if recalled[i] {
						continue
					}
					if in, sure = decide(est, e, fr[j]); !sure {
						if exact < 0 {
							exact = sqDist(xi, fake.RawRowView(j))
						}
						in = lessExact(exact, fr[j])
					}
					recalled[i] = in
				}
			}
		}
		tick()
		return nil
	})
	if err != nil {
		return PRDC{}, err
	}
	var p PRDC
	var dens int64
	for j := range count {
		c := count[j].Load()
		dens += int64(c)
		if c > 0 {
			p.Precision++
		}
	}
	for i := range covered {
		if covered[i] {
			p.Coverage++
		}
		if recalled[i] {
			p.Recall++
		}
	}
	p.Precision /= float64(nf)
	p.Density = (1 / float64(k)) * (float64(dens) / float64(nf))
	p.Coverage /= float64(nr)
	p.Recall /= float64(nr)
	return p, nil
}
