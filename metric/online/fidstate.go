package online

import (
	"errors"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/internal/tensor/linalg"
	"github.com/genlens/genlens/metric/frechet"
)

// fidEstimator is one generator's incremental FID state.
//
// It keeps the running mean and 1/n covariance of the raw rows (for the
// mean term, Tr Σ̂ and the truncated statistics of the bonus), the rows
// themselves (for the mean deviation of Eq. 11, which depends on every row
// through the current mean), and the rows projected on the reference
// factor, y = G(x − c) for a fixed shift c, through which Tr(Σ̂Σ_r)^{1/2}
// is computed: the eigenvalues of Σ̂Σ_r are those of GΣ̂Gᵀ, the covariance
// of the y's.
// While n < r (r = rank Σ_r) that covariance is never formed: its nonzero
// eigenvalues are those of the centred n×n Gram matrix of the y's over n,
// and the Gram matrix grows by b rows per batch. At n ≥ r the y's move
// into a running r×r covariance.
type fidEstimator struct {
	ref   *FIDReference
	p     FIDParams
	tau   float64
	rules []FIDRule
	acc   *frechet.Accumulator
	n     int

	// For the mean deviation: the rows minus a fixed shift c (the mean of
	// the first batch), n×d row-major, and their squared norms, so that
	// ‖x_i − μ̂‖² = ‖x_i − c‖² − 2(x_i − c)·(μ̂ − c) + ‖μ̂ − c‖² costs one
	// matrix-vector product per step. The shift keeps the cancellation in
	// that sum small when the features share a large offset.
	shift []float64
	rows  []float64
	sq    []float64

	// Gram path, while n < r.
	y    []float64 // projected rows, n×r, row-major
	gram []float64 // Y Yᵀ in the leading n×n block, stride gcap
	gcap int

	// Covariance path, from n ≥ r on.
	yacc *frechet.Accumulator
}

func newFIDEstimator(ref *FIDReference, p FIDParams, rules []FIDRule) *fidEstimator {
	return &fidEstimator{
		ref:   ref,
		p:     p,
		tau:   p.TruncationRatio * ref.norm,
		rules: rules,
		acc:   frechet.NewAccumulator(ref.Dim()),
	}
}

// add adds a batch whose shape and values the caller has validated.
func (e *fidEstimator) add(batch *mat.Dense) error {
	b, d := batch.Dims()
	e.acc.AddRows(batch)
	raw := batch.RawMatrix()
	if e.shift == nil {
		e.shift = make([]float64, d)
		for i := 0; i < b; i++ {
			for j, v := range raw.Data[i*raw.Stride : i*raw.Stride+d] {
				e.shift[j] += v / float64(b)
			}
		}
	}
	for i := 0; i < b; i++ {
		var s float64
		for j, v := range raw.Data[i*raw.Stride : i*raw.Stride+d] {
			t := v - e.shift[j]
			e.rows = append(e.rows, t)
			s += t * t
		}
		e.sq = append(e.sq, s)
	}
	n0 := e.n
	e.n += b
	r := e.ref.Rank()
	if r == 0 {
		return nil // Σ_r = 0: the trace term is 0 whatever the samples
	}
	// yb = (batch − 1cᵀ) Gᵀ, b×r: the new rows of e.rows, projected. The
	// trace term depends only on the centred y's, so any fixed shift will
	// do, and the generator's own first-batch mean c keeps the centring of
	// the Gram matrix free of cancellation when the features share a
	// large offset.
	xc := mat.NewDense(b, d, e.rows[n0*d:])
	yb := mat.NewDense(b, r, nil)
	yb.Mul(xc, e.ref.factor)

	if e.yacc != nil {
		e.yacc.AddRows(yb)
		return nil
	}
	e.y = append(e.y, yb.RawMatrix().Data...)
	if e.n >= r {
		// Switch paths: from now on an r×r eigenproblem is no larger
		// than the n×n one. This one-off costs O(n r²).
		e.yacc = frechet.NewAccumulator(r)
		e.yacc.AddRows(mat.NewDense(e.n, r, e.y))
		e.y, e.gram, e.gcap = nil, nil, 0
		return nil
	}
	e.growGram(e.n, r)
	// New inner products: rows n0..n−1 against rows 0..n−1.
	all := blas64.General{Rows: e.n, Cols: r, Stride: r, Data: e.y}
	blk := blas64.General{Rows: b, Cols: r, Stride: r, Data: e.y[n0*r:]}
	out := blas64.General{Rows: b, Cols: e.n, Stride: e.gcap, Data: e.gram[n0*e.gcap:]}
	blas64.Gemm(blas.NoTrans, blas.Trans, 1, blk, all, 0, out)
	for i := n0; i < e.n; i++ {
		for j := 0; j < n0; j++ {
			e.gram[j*e.gcap+i] = e.gram[i*e.gcap+j]
		}
	}
	return nil
}

// growGram makes room for an n×n Gram matrix, doubling the capacity so
// that growing by b rows per step copies O(n²) values only O(log n) times.
// The Gram path ends before n reaches r, so the capacity never exceeds r.
func (e *fidEstimator) growGram(n, r int) {
	if n <= e.gcap {
		return
	}
	c := min(max(n, 2*e.gcap, 16), r)
	g := make([]float64, c*c)
	for i := 0; i < e.gcap; i++ {
		copy(g[i*c:i*c+e.gcap], e.gram[i*e.gcap:(i+1)*e.gcap])
	}
	e.gram, e.gcap = g, c
}

// traceSqrt returns Tr(Σ̂Σ_r)^{1/2} for the 1/n covariance Σ̂.
func (e *fidEstimator) traceSqrt() (float64, error) {
	if e.ref.Rank() == 0 || e.n < 2 {
		return 0, nil // a single row has zero covariance
	}
	if e.yacc != nil {
		c := e.yacc.Cov(0).RawSymmetric()
		return sumSqrtEigenUpper(c.N, c.Data, c.Stride)
	}
	return sumSqrtEigenUpper(e.n-1, centredGram(e.gram, e.n, e.gcap), e.n-1)
}

// centredGram returns H K H / n with its exactly-zero direction removed,
// as the upper triangle of an (n−1)×(n−1) row-major matrix:
// K is the n×n Gram matrix of the projected rows (stride s), H = I − 11ᵀ/n
// centres them, and HKH/n has the nonzero eigenvalues of their 1/n
// covariance. HKH annihilates 1, so rotating by the Householder reflection
// Q that maps 1/√n to e₁ zeroes the first row and column; dropping them
// leaves an (n−1)×(n−1) matrix whose eigenvalues are the others, and the
// zero eigenvalue never appears as rounding noise (whose square root would
// be ~1e-8 of the scale, not 0).
func centredGram(k []float64, n, s int) []float64 {
	a := make([]float64, n*n)
	rm := make([]float64, n)
	linalg.CentreGram(a, n, k, s, n, rm)
	inv := 1 / float64(n)
	for i := range a {
		a[i] *= inv
	}
	// Q = I − β v vᵀ, v = 1/√n − e₁, β = 2/vᵀv; QAQ = A − β(v wᵀ + w vᵀ) + β² α v vᵀ
	// with w = A v and α = vᵀ w.
	rn := 1 / math.Sqrt(float64(n))
	v := make([]float64, n)
	for i := range v {
		v[i] = rn
	}
	v[0] -= 1
	beta := 2 / (2 - 2*rn)
	w := rm // reuse
	var alpha float64
	for i := 0; i < n; i++ {
		var t float64
		for j, aij := range a[i*n : i*n+n] {
			t += aij * v[j]
		}
		w[i] = t
		alpha += v[i] * t
	}
	m := n - 1
	out := make([]float64, m*m)
	for i := 1; i < n; i++ {
		for j := i; j < n; j++ {
			out[(i-1)*m+j-1] = a[i*n+j] - beta*(v[i]*w[j]+w[i]*v[j]) + beta*beta*alpha*v[i]*v[j]
		}
	}
	return out
}

// errEigen is returned when the symmetric eigenvalue iteration does not
// converge, which takes pathological input.
var errEigen = errors.New("eigenvalue iteration did not converge")

// estimate summarises the samples so far.
func (e *fidEstimator) estimate() (FIDEstimate, error) {
	out := FIDEstimate{N: e.n}
	if e.n == 0 {
		return out, nil
	}
	d := e.ref.Dim()
	mu := e.acc.Mean()
	cov := e.acc.Cov(0)
	ts, err := e.traceSqrt()
	if err != nil {
		return out, err
	}
	var dm float64
	for j, v := range mu {
		t := v - e.ref.mu[j]
		dm += t * t
	}
	// The truncated statistics read the upper triangles of Σ̂ and Σ_r,
	// counting each off-diagonal entry twice.
	cr, sr := cov.RawSymmetric(), e.ref.sigma.RawSymmetric()
	for i := 0; i < d; i++ {
		crow := cr.Data[i*cr.Stride : i*cr.Stride+d]
		srow := sr.Data[i*sr.Stride : i*sr.Stride+d]
		v := crow[i]
		out.TraceCov += v
		out.MaxVar = max(out.MaxVar, v)
		if math.Abs(v) >= e.tau {
			out.TruncAbsSum += math.Abs(v)
			out.TruncTraceRef += v * srow[i]
		}
		for j := i + 1; j < d; j++ {
			if v := crow[j]; math.Abs(v) >= e.tau {
				out.TruncAbsSum += 2 * math.Abs(v)
				out.TruncTraceRef += 2 * v * srow[j]
			}
		}
	}
	// The true distance is a squared Wasserstein distance, never
	// negative; a negative value is rounding in the cancellation.
	out.FID = max(dm+out.TraceCov+e.ref.trace-2*ts, 0)
	mc := make([]float64, d) // μ̂ − c
	var mm float64
	for j, v := range mu {
		mc[j] = v - e.shift[j]
		mm += mc[j] * mc[j]
	}
	dots := make([]float64, e.n)
	blas64.Gemv(blas.NoTrans, 1, blas64.General{Rows: e.n, Cols: d, Stride: d, Data: e.rows},
		blas64.Vector{N: d, Inc: 1, Data: mc}, 0, blas64.Vector{N: e.n, Inc: 1, Data: dots})
	var dev float64
	for i, s := range e.sq {
		dev += math.Sqrt(max(s-2*dots[i]+mm, 0))
	}
	out.MeanDeviation = dev / float64(e.n)
	out.MeanDistance = math.Sqrt(dm)
	if e.p.Form == BonusFDUCB2025 {
		if err := threshStats(&out, cov, e.n); err != nil {
			return out, err
		}
	}
	return out, nil
}

// threshStats fills the 2025 bonus's statistics of the sample covariance
// cov of n rows: entries below 2 √(2 Σ̂_ii Σ̂_jj log d / n) in magnitude
// are zeroed, and the eigenvalues of the rest give its norm, Σλ² and
// trace.
func threshStats(out *FIDEstimate, cov *mat.SymDense, n int) error {
	d := cov.SymmetricDim()
	t := mat.NewSymDense(d, nil)
	k := 2 * math.Sqrt(2*math.Log(float64(d))/float64(n))
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			v := cov.At(i, j)
			if math.Abs(v) >= k*math.Sqrt(max(cov.At(i, i)*cov.At(j, j), 0)) {
				t.SetSym(i, j, v)
			}
		}
	}
	var es mat.EigenSym
	if !es.Factorize(t, false) {
		return errors.New("online: eigenvalues of the thresholded covariance did not converge")
	}
	out.ThreshNorm, out.ThreshTraceSq, out.ThreshTrace = 0, 0, 0
	for _, v := range es.Values(nil) {
		out.ThreshNorm = max(out.ThreshNorm, v)
		out.ThreshTraceSq += v * v
		out.ThreshTrace += v
	}
	return nil
}

// keys writes the index of each of e.rules; lower is better for FID.
func (e *fidEstimator) keys(dst []float64) error {
	est, err := e.estimate()
	if err != nil {
		return err
	}
	for i, r := range e.rules {
		dst[i] = r.Index(est, e.ref, e.p)
	}
	return nil
}
