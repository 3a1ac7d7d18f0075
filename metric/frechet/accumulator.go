package frechet

import (
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	// linalg installs the BLAS backend (internal/simdblas's kernels by
	// default, OpenBLAS/LAPACKE under -tags openblas); every blas64 and
	// lapack64 call below then runs there.
	"github.com/genlens/genlens/internal/tensor/linalg"
)

// fastBLAS reports a blocked, parallel BLAS with a fast DSYRK and DSYMV
// (linalg.Tuned): internal/simdblas or OpenBLAS, not gonum's own.
var fastBLAS = linalg.Tuned()

// chunkElems bounds the transposed, centred copy AddRows makes of a batch
// (rows × d float64 values, 32 MiB): large enough that each matrix product
// runs at full BLAS speed, small enough that a 50,000-row feature file
// does not need a second full-size copy in memory.
var chunkElems = 1 << 22 // a variable so tests can force several chunks

// Accumulator streams d-dimensional rows into their mean and covariance,
// accumulated in float64 whatever the input precision.
//
// It keeps the count n, the mean and the scatter matrix
// M2 = Σ (x_i - mean)(x_i - mean)ᵀ, never raw sums of squares: Σ x xᵀ - n
// mean meanᵀ cancels catastrophically when the features share a large offset
// (1e6 offsets leave no correct digit in float64), while centred updates
// keep full accuracy. Single rows go through Welford's update; batches are
// centred on their own mean (two passes over the batch), their scatter
// matrix is one BLAS product, and the batch is merged with Chan, Golub and
// LeVeque's parallel formula
//
//	M2 = M2_a + M2_b + δ δᵀ n_a n_b / (n_a + n_b),  δ = mean_b - mean_a.
//
// The zero value is not usable; create one with NewAccumulator.
type Accumulator struct {
	d    int
	n    int
	mean []float64
	m2   *mat.SymDense // upper triangle of the scatter matrix
	buf  []float64     // scratch: a centred row or a chunk's residual sums
	row  []float64     // scratch: a float32 row widened to float64
}

// NewAccumulator returns an empty accumulator for rows of length d > 0.
func NewAccumulator(d int) *Accumulator {
	if d <= 0 {
		panic("frechet: NewAccumulator: dimension must be positive")
	}
	return &Accumulator{
		d:    d,
		mean: make([]float64, d),
		m2:   mat.NewSymDense(d, nil),
		buf:  make([]float64, d),
		row:  make([]float64, d),
	}
}

// Dim returns the row length d.
func (a *Accumulator) Dim() int { return a.d }

// N returns the number of rows added so far.
func (a *Accumulator) N() int { return a.n }

// Add adds one row. len(row) must be d; a row of another length is a
// programming error and panics, as gonum's vector operations do.
//
// Each call is an O(d²) rank-one update; use AddRows for many rows at once.
func (a *Accumulator) Add(row []float64) {
	if len(row) != a.d {
		panic("frechet: Accumulator.Add: row length differs from the dimension")
	}
	a.n++
	delta := a.buf
	inv := 1 / float64(a.n)
	for j, v := range row {
		delta[j] = v - a.mean[j]
		a.mean[j] += delta[j] * inv
	}
	// Welford: M2 += δ (x - mean_new)ᵀ = (n-1)/n δ δᵀ, symmetric.
	blas64.Syr(float64(a.n-1)*inv, blas64.Vector{N: a.d, Inc: 1, Data: delta}, a.m2.RawSymmetric())
}

// AddFloat32 adds one float32 row, widened to float64 before any
// arithmetic. len(row) must be d.
func (a *Accumulator) AddFloat32(row []float32) {
	if len(row) != a.d {
		panic("frechet: Accumulator.AddFloat32: row length differs from the dimension")
	}
	for j, v := range row {
		a.row[j] = float64(v)
	}
	a.Add(a.row)
}

// AddRows adds every row of x, which must have d columns.
//
// The rows are processed in chunks: each chunk is centred on its own mean
// and transposed, its scatter matrix is computed by one symmetric rank-k
// product (SYRK with internal/simdblas or OpenBLAS; with gonum's own BLAS
// a strip-wise GEMM, because its Dgemm is parallel and blocked while its
// Dsyrk is neither), and
// the chunk is merged into the running statistics with Chan's formula.
func (a *Accumulator) AddRows(x *mat.Dense) {
	n, d := x.Dims()
	if d != a.d {
		panic("frechet: Accumulator.AddRows: column count differs from the dimension")
	}
	raw := x.RawMatrix()
	rows := min(n, ChunkRows(d))
	t := make([]float64, d*rows)
	cm := make([]float64, d)
	for lo := 0; lo < n; lo += rows {
		hi := min(lo+rows, n)
		a.addChunk(raw, lo, hi, cm, t[:d*(hi-lo)])
	}
}

// ChunkRows returns how many rows of length d AddRows merges at a time.
// A caller that streams rows in batches of this size (the last one
// shorter) gets exactly the numbers of one AddRows over all rows.
func ChunkRows(d int) int { return max(1, chunkElems/d) }

// addChunk merges rows lo..hi-1 of x; cm and t are scratch of length d and
// d×(hi-lo).
func (a *Accumulator) addChunk(x blas64.General, lo, hi int, cm, t []float64) {
	d := a.d
	c := hi - lo
	// Chunk mean by the corrected two-pass method: a plain mean, then the
	// mean of the residuals, which removes the rounding error of the first
	// pass when the rows share a large offset.
	clear(cm)
	for i := lo; i < hi; i++ {
		row := x.Data[i*x.Stride : i*x.Stride+d]
		for j, v := range row {
			cm[j] += v
		}
	}
	inv := 1 / float64(c)
	for j := range cm {
		cm[j] *= inv
	}
	corr := a.buf
	clear(corr)
	for i := lo; i < hi; i++ {
		row := x.Data[i*x.Stride : i*x.Stride+d]
		for j, v := range row {
			corr[j] += v - cm[j]
		}
	}
	for j := range cm {
		cm[j] += corr[j] * inv
	}
	if fastBLAS {
		// A blocked SYRK takes the centred rows as they are: Xcᵀ Xc.
		for i := lo; i < hi; i++ {
			row := x.Data[i*x.Stride : i*x.Stride+d]
			dst := t[(i-lo)*d : (i-lo+1)*d]
			for j, v := range row {
				dst[j] = v - cm[j]
			}
		}
		blas64.Syrk(blas.Trans, 1, blas64.General{Rows: c, Cols: d, Stride: d, Data: t}, 1, a.m2.RawSymmetric())
	} else {
		// Centred rows, transposed to d×c so the scatter matrix T Tᵀ is
		// the NoTrans/Trans product, gonum's fastest Dgemm variant (dot
		// products over contiguous memory). Blocks of 64 rows keep the
		// strided writes in cache.
		const blk = 64
		for i0 := lo; i0 < hi; i0 += blk {
			i1 := min(i0+blk, hi)
			for j0 := 0; j0 < d; j0 += blk {
				j1 := min(j0+blk, d)
				for i := i0; i < i1; i++ {
					row := x.Data[i*x.Stride : i*x.Stride+d]
					col := i - lo
					for j := j0; j < j1; j++ {
						t[j*c+col] = row[j] - cm[j]
					}
				}
			}
		}
		addGramUpper(a.m2.RawSymmetric(), blas64.General{Rows: d, Cols: c, Stride: c, Data: t})
	}

	// Chan et al.: merge (n_a, mean_a, M2_a) with (c, cm, M2_b); M2_b is
	// already in a.m2.
	na := float64(a.n)
	nt := na + float64(c)
	delta := corr
	for j := range delta {
		delta[j] = cm[j] - a.mean[j]
	}
	if a.n > 0 {
		blas64.Syr(na*float64(c)/nt, blas64.Vector{N: d, Inc: 1, Data: delta}, a.m2.RawSymmetric())
	}
	w := float64(c) / nt
	for j := range a.mean {
		a.mean[j] += delta[j] * w
	}
	a.n += c
}

// Merge adds the rows summarised by b, as if they had been added to a one
// by one (Chan et al.'s parallel formula). b is not modified.
func (a *Accumulator) Merge(b *Accumulator) {
	if b.d != a.d {
		panic("frechet: Accumulator.Merge: dimensions differ")
	}
	if b.n == 0 {
		return
	}
	na, nb := float64(a.n), float64(b.n)
	nt := na + nb
	delta := make([]float64, a.d)
	for j := range delta {
		delta[j] = b.mean[j] - a.mean[j]
	}
	am, bm := a.m2.RawSymmetric(), b.m2.RawSymmetric()
	for i := 0; i < a.d; i++ {
		ar := am.Data[i*am.Stride : i*am.Stride+a.d]
		br := bm.Data[i*bm.Stride : i*bm.Stride+a.d]
		for j := i; j < a.d; j++ {
			ar[j] += br[j]
		}
	}
	blas64.Syr(na*nb/nt, blas64.Vector{N: a.d, Inc: 1, Data: delta}, am)
	for j := range a.mean {
		a.mean[j] += delta[j] * nb / nt
	}
	a.n += b.n
}

// Mean returns a copy of the mean of the rows added so far (NaN when none).
func (a *Accumulator) Mean() []float64 {
	m := make([]float64, a.d)
	if a.n == 0 {
		for j := range m {
			m[j] = math.NaN()
		}
		return m
	}
	copy(m, a.mean)
	return m
}

// Cov returns the covariance matrix M2 / (n - ddof): ddof = 1 is the
// unbiased (n-1) normalisation of np.cov and pytorch-fid, used for offline
// FID; ddof = 0 is the 1/n normalisation of the online algorithms
// of package online.
//
// Like np.cov, it returns a matrix of NaN when n - ddof <= 0 (for example a
// single row with ddof = 1) rather than panic; Distance rejects it.
func (a *Accumulator) Cov(ddof int) *mat.SymDense {
	s := mat.NewSymDense(a.d, nil)
	den := float64(a.n - ddof)
	if den <= 0 {
		for i := 0; i < a.d; i++ {
			for j := i; j < a.d; j++ {
				s.SetSym(i, j, math.NaN())
			}
		}
		return s
	}
	src, dst := a.m2.RawSymmetric(), s.RawSymmetric()
	inv := 1 / den
	for i := 0; i < a.d; i++ {
		sr := src.Data[i*src.Stride : i*src.Stride+a.d]
		dr := dst.Data[i*dst.Stride : i*dst.Stride+a.d]
		for j := i; j < a.d; j++ {
			dr[j] = sr[j] * inv
		}
	}
	return s
}

// Stats returns the count, mean and covariance (normalised by n - ddof)
// of the rows added so far.
func (a *Accumulator) Stats(ddof int) Stats {
	return Stats{N: a.n, Mu: a.Mean(), Sigma: a.Cov(ddof)}
}

// TakeStats is Stats without copying the covariance: the accumulator's
// own scatter matrix is scaled into it (a 16384-d covariance is 2 GiB),
// so a must not be used afterwards.
func (a *Accumulator) TakeStats(ddof int) Stats {
	den := float64(a.n - ddof)
	if den <= 0 {
		return a.Stats(ddof)
	}
	raw, inv := a.m2.RawSymmetric(), 1/den
	for i := 0; i < a.d; i++ {
		r := raw.Data[i*raw.Stride : i*raw.Stride+a.d]
		for j := i; j < a.d; j++ {
			r[j] *= inv
		}
	}
	s := Stats{N: a.n, Mu: a.Mean(), Sigma: a.m2}
	a.m2 = nil
	return s
}

// addGramUpper adds T Tᵀ to the upper triangle of c, for T of size d×k.
// Entries below the diagonal of c's storage may be overwritten; a
// blas.Upper symmetric matrix never reads them.
func addGramUpper(c blas64.Symmetric, t blas64.General) {
	// Row strips of the upper triangle, each one parallel Dgemm of
	// a strip of T against the rows from the strip's diagonal onwards.
	// This does about half the flops of the full product (plus half of
	// each diagonal block), at Dgemm speed.
	const strip = 256
	d := t.Rows
	for i0 := 0; i0 < d; i0 += strip {
		i1 := min(i0+strip, d)
		a := blas64.General{Rows: i1 - i0, Cols: t.Cols, Stride: t.Stride, Data: t.Data[i0*t.Stride:]}
		b := blas64.General{Rows: d - i0, Cols: t.Cols, Stride: t.Stride, Data: t.Data[i0*t.Stride:]}
		cc := blas64.General{Rows: i1 - i0, Cols: d - i0, Stride: c.Stride, Data: c.Data[i0*c.Stride+i0:]}
		blas64.Gemm(blas.NoTrans, blas.Trans, 1, a, b, 1, cc)
	}
}

// Stats are the Gaussian statistics of a feature set: the sample count (0
// when unknown, as in pytorch-fid's stats files), the mean vector and the
// covariance matrix.
type Stats struct {
	N     int
	Mu    []float64
	Sigma *mat.SymDense
}

// StatsOf returns the statistics of the rows of x, the covariance
// normalised by n - ddof (see Accumulator.Cov).
func StatsOf(x *mat.Dense, ddof int) Stats {
	_, d := x.Dims()
	a := NewAccumulator(d)
	a.AddRows(x)
	return a.Stats(ddof)
}

// Dim returns the feature dimension d.
func (s Stats) Dim() int { return len(s.Mu) }
