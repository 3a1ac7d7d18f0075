package frechet

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/mat"
)

// Distance returns the Fréchet distance between the Gaussians N(a.Mu,
// a.Sigma) and N(b.Mu, b.Sigma):
//
//	FD = ||μ₁ - μ₂||² + Tr Σ₁ + Tr Σ₂ - 2 Tr (Σ₁ Σ₂)^{1/2},
//
// FID when the statistics come from Inception features, FD-DINOv2, FAD or
// FVD on other embeddings. The trace term is computed by TraceSqrtProduct,
// never by a general matrix square root, so singular covariances (fewer
// samples than dimensions) are fine and the result is never NaN or complex.
//
// The true distance is a squared 2-Wasserstein distance and so is never
// negative; a value below zero by at most PSDTolerance of the scale
// ||μ₁ - μ₂||² + Tr Σ₁ + Tr Σ₂ is rounding in the cancellation of the
// trace terms (or a covariance stored in float32), and is clamped at 0.
// Further below zero, a covariance is not positive semidefinite, and the
// result is an error wrapping ErrNotPSD rather than a clamped 0. When Σ₁
// and Σ₂ are equal element for element, Tr (Σ Σ)^{1/2} = Tr Σ is used
// exactly, so comparing a set of statistics with itself gives 0, not
// rounding noise.
//
// Errors: different dimensions, a covariance of the wrong size, NaN or
// ±Inf entries (a covariance of fewer than ddof+1 rows is NaN), a
// negative variance, or a covariance that is clearly not positive
// semidefinite (errors.Is(err, ErrNotPSD)): a pair of coordinates with
// |Σᵢⱼ| > √(Σᵢᵢ Σⱼⱼ), a pivoted Cholesky factorisation that meets
// negative pivots summing to more than PSDTolerance of the trace, or a
// distance negative beyond rounding as above. These are necessary
// conditions only: an indefinite covariance that passes them all (its
// negative part below the tolerance) is treated as its positive part.
func Distance(a, b Stats) (float64, error) {
	if err := a.check("first statistics"); err != nil {
		return math.NaN(), err
	}
	if err := b.check("second statistics"); err != nil {
		return math.NaN(), err
	}
	if a.Dim() != b.Dim() {
		return math.NaN(), fmt.Errorf("frechet: dimension mismatch: %d and %d", a.Dim(), b.Dim())
	}
	if err := CheckDistanceDim(a.Dim()); err != nil {
		return math.NaN(), err
	}
	tr, err := traceSqrt(a.Sigma, b.Sigma)
	if err != nil {
		return math.NaN(), err
	}
	return assemble(a.Mu, b.Mu, trace(a.Sigma), trace(b.Sigma), tr)
}

// PSDTolerance is how far a covariance may be from positive semidefinite,
// relative to its scale, before Distance and Reference call it an error
// (ErrNotPSD) rather than rounding: the negative pivots of its pivoted
// Cholesky factorisation may sum to -PSDTolerance·Tr Σ, a Fréchet distance
// may come out as -PSDTolerance·(||μ₁-μ₂||² + Tr Σ₁ + Tr Σ₂) (and is then
// clamped to 0), and |Σᵢⱼ| may exceed √(Σᵢᵢ Σⱼⱼ) by PSDTolerance of
// itself (plus PSDTolerance·10⁻⁴ of the largest variance).
//
// The tolerance is loose because covariances stored in float32 are not
// positive semidefinite to float64 precision: for a rank-deficient
// covariance (fewer samples than dimensions) rounded to float32, the
// negative pivots reach a few 10⁻⁷ of the trace and the distance to its
// own float64 original about -10⁻⁶ of the scale (measured for d = 64 to
// 2048). A covariance that is not positive semidefinite by mistake (a
// corrupted or hand-made file) is typically off by order 1.
const PSDTolerance = 1e-4

// ErrNotPSD is wrapped by the errors of Distance, DistanceToRef,
// NewReference and the Reference methods when a covariance is clearly not
// positive semidefinite (see PSDTolerance).
var ErrNotPSD = errors.New("covariance is not positive semidefinite")

// PSDError is the error of a covariance found clearly not positive
// semidefinite by a factorisation, an eigendecomposition or a negative
// distance (see PSDTolerance); entries that no covariance can have are a
// *PairError instead. It wraps ErrNotPSD.
//
// Which names the statistics at fault as the function's documentation
// does ("first statistics", "second statistics", "reference
// statistics"), or is "" when the Fréchet distance as a whole came out
// negative and either covariance may be at fault. Reason is the evidence,
// starting with ErrNotPSD's text, so that a caller that knows which file
// held the statistics can report it without the package's wording of the
// argument.
type PSDError struct {
	Which  string
	Reason string
}

func (e *PSDError) Error() string {
	if e.Which == "" {
		return e.Reason
	}
	return e.Which + ": " + e.Reason
}

func (e *PSDError) Unwrap() error { return ErrNotPSD }

// withWhich returns e naming the statistics at fault.
func (e *PSDError) withWhich(which string) *PSDError {
	return &PSDError{Which: which, Reason: e.Reason}
}

// assemble returns ||μ₁-μ₂||² + t₁ + t₂ - 2 trSqrt, clamped at 0 when it
// is negative by rounding only, and an error wrapping ErrNotPSD when it is
// negative beyond PSDTolerance of ||μ₁-μ₂||² + t₁ + t₂.
func assemble(mu1, mu2 []float64, t1, t2, trSqrt float64) (float64, error) {
	var dm float64
	for i, v := range mu1 {
		e := v - mu2[i]
		dm += e * e
	}
	scale := dm + t1 + t2
	fd := scale - 2*trSqrt
	if fd < -PSDTolerance*scale {
		return math.NaN(), fmt.Errorf("frechet: %w", &PSDError{Reason: fmt.Sprintf("%v: the Fréchet distance comes out as %.6g, negative by %.2g of its scale ||μ₁-μ₂||² + Tr Σ₁ + Tr Σ₂ = %.6g",
			ErrNotPSD, fd, -fd/scale, scale)})
	}
	return max(fd, 0), nil
}

// TraceSqrtProduct returns Tr (S₁ S₂)^{1/2} for symmetric positive
// semidefinite S₁ and S₂ of the same size (it panics with mat.ErrShape
// otherwise), or NaN if the singular value iteration fails to converge or
// a factorisation shows S₁ or S₂ clearly indefinite (see PSDTolerance).
//
// S₁ S₂ is not symmetric, but its eigenvalues are real and non-negative:
// with any factors S₁ = F₁ F₁ᵀ and S₂ = F₂ F₂ᵀ they are the squared
// singular values of A = F₂ᵀ F₁, so the trace of the square root is the sum
// of the singular values of A (its nuclear norm). The factors come from
// Cholesky factorisation with complete pivoting (LAPACK dpstrf), which
// stops at the numerical rank, so a rank-r covariance gives an r-column
// factor and zero eigenvalues never enter. Why this route rather than
// eigendecomposing S₂ and forming S₂^{1/2} S₁ S₂^{1/2}:
//
//   - accuracy: singular values of A are computed with absolute error
//     about ε‖A‖, while eigenvalues λ of the symmetric A Aᵀ (or of
//     S₂^{1/2} S₁ S₂^{1/2}) carry error ε‖A‖², which becomes up to
//     √ε‖A‖ ≈ 10⁻⁸‖A‖ after the square root of an eigenvalue near zero;
//   - speed: a pivoted Cholesky costs d³/3 flops against the ~9d³ of a
//     symmetric eigendecomposition with vectors (114 s at d = 2048 in
//     gonum's pure-Go LAPACK), and gonum's values-only SVD is about twice
//     as fast as its values-only symmetric eigensolver;
//   - robustness: no eigenvectors, no inverse, no general (non-symmetric)
//     eigenproblem, nothing that can return complex numbers.
//
// With a tuned BLAS (linalg.Tuned: internal/simdblas's kernels in the
// default build, or OpenBLAS), the values-only symmetric eigensolver
// (dsyev: about 0.35 s at d = 2048 with LAPACKE, 0.5-0.9 s with gonum's
// LAPACK on internal/simdblas) is several times faster than the
// values-only SVD, whose bidiagonalisation is matrix-vector products
// (about 1 s with LAPACKE, 1.6 s in gonum), so those builds take the
// square roots of the eigenvalues of the smaller of A Aᵀ and AᵀA instead,
// tiny negative ones clipped to 0; its accuracy is the √ε bound above,
// which for full-rank feature covariances stays below 10⁻⁹ relative
// (tested).
func TraceSqrtProduct(s1, s2 mat.Symmetric) float64 {
	if s1.SymmetricDim() != s2.SymmetricDim() {
		panic(mat.ErrShape)
	}
	tr, err := traceSqrt(s1, s2)
	if err != nil {
		return math.NaN()
	}
	return tr
}

// traceSqrt is TraceSqrtProduct with the convergence failure as an error.
func traceSqrt(s1, s2 mat.Symmetric) (float64, error) {
	if equalSym(s1, s2) {
		// (S S)^{1/2} = S for positive semidefinite S: exact.
		return trace(s1), nil
	}
	f1, err := factor(s1)
	if err != nil {
		return math.NaN(), fmt.Errorf("frechet: %w", err.withWhich("first statistics"))
	}
	f2, err := factor(s2)
	if err != nil {
		return math.NaN(), fmt.Errorf("frechet: %w", err.withWhich("second statistics"))
	}
	if f1 == nil || f2 == nil {
		return 0, nil // a zero covariance: S₁ S₂ = 0
	}
	return traceSqrtFactors(f1, f2)
}

// pivChol is a Cholesky factorisation with complete pivoting of a d×d
// positive semidefinite S, truncated at its numerical rank r:
// Pᵀ S P = Uᵀ U, U r×d upper trapezoidal (U[k][j] = 0 for j < k), and
// P[piv[j]][j] = 1, so S = Gᵀ G with G = U Pᵀ.
type pivChol struct {
	u    *mat.Dense
	piv  []int // column j of U belongs to coordinate piv[j]
	ipiv []int // the inverse: coordinate c is column ipiv[c] of U
}

// factor returns the pivoted Cholesky factor of s at LAPACK's default
// tolerance (pivots below d·ε·max S_ii end it), or nil when the rank is 0.
// s is not modified. Stopping at the numerical rank is what keeps the
// rounding-level tail of a rank-deficient covariance out of the trace term.
//
// What the factorisation leaves, the Schur complement C of the first rank
// pivots, is positive semidefinite when s is, so its diagonal (all below
// the tolerance when the factorisation stops) is then zero up to rounding.
// When its negative entries sum to less than -PSDTolerance·Tr s, s is not
// positive semidefinite and the error wraps ErrNotPSD; dropping C, as the
// truncation does, would silently replace s by a different matrix.
func factor(s mat.Symmetric) (*pivChol, *PSDError) {
	if openblas {
		// LAPACKE's unpivoted dpotrf is 2-3 times faster than dpstrf at
		// d = 2048 (gonum's pure-Go pair runs at the same speed).
		if f := factorFullRank(s); f != nil {
			return f, nil
		}
	}
	d := s.SymmetricDim()
	c := mat.NewSymDense(d, nil)
	c.CopySym(s)
	piv := make([]int, d)
	work := make([]float64, 2*d)
	t, rank, _ := lapack64.Pstrf(c.RawSymmetric(), piv, -1, work)
	if err := checkSchurDiag(s, t, piv, rank); err != nil {
		return nil, err
	}
	if rank == 0 {
		return nil, nil
	}
	u := mat.NewDense(rank, d, nil)
	ur := u.RawMatrix()
	for k := 0; k < rank; k++ {
		copy(ur.Data[k*ur.Stride+k:k*ur.Stride+d], t.Data[k*t.Stride+k:k*t.Stride+d])
	}
	ipiv := make([]int, d)
	for j, c := range piv {
		ipiv[c] = j
	}
	return &pivChol{u: u, piv: piv, ipiv: ipiv}, nil
}

// checkSchurDiag returns an error wrapping ErrNotPSD when the diagonal of
// the Schur complement that a pivoted Cholesky factorisation of s stopped
// at (t, piv, rank from Pstrf) has negative entries summing to less than
// -PSDTolerance·Tr s. Cost O(rank·(d-rank)).
func checkSchurDiag(s mat.Symmetric, t blas64.Triangular, piv []int, rank int) *PSDError {
	d := s.SymmetricDim()
	if rank == d {
		return nil
	}
	var neg, low float64
	for j := rank; j < d; j++ {
		v := s.At(piv[j], piv[j])
		for k := 0; k < rank; k++ {
			u := t.Data[k*t.Stride+j]
			v -= u * u
		}
		if v < 0 {
			neg += v
			low = min(low, v)
		}
	}
	if tr := trace(s); neg < -PSDTolerance*tr {
		return &PSDError{Reason: fmt.Sprintf("%v: its pivoted Cholesky factorisation stops after %d of %d pivots, leaving negative pivots (lowest %.6g, sum %.6g, %.2g of the trace %.6g)",
			ErrNotPSD, rank, d, low, neg, neg/tr, tr)}
	}
	return nil
}

// factorFullRank returns the unpivoted Cholesky factor of s (identity
// permutation) when every pivot exceeds the tolerance of factor, and nil
// otherwise. In that case complete pivoting would also have run to full
// rank (the largest remaining diagonal entry is at least the natural
// pivot), so the two factors are interchangeable.
func factorFullRank(s mat.Symmetric) *pivChol {
	d := s.SymmetricDim()
	c := mat.NewSymDense(d, nil)
	c.CopySym(s)
	var dmax float64
	for i := 0; i < d; i++ {
		dmax = max(dmax, c.At(i, i))
	}
	t, ok := lapack64.Potrf(c.RawSymmetric())
	if !ok {
		return nil
	}
	tol := float64(d) * dlamchE * dmax
	u := mat.NewDense(d, d, nil)
	ur := u.RawMatrix()
	for k := 0; k < d; k++ {
		if p := t.Data[k*t.Stride+k]; p*p <= tol {
			return nil
		}
		copy(ur.Data[k*ur.Stride+k:k*ur.Stride+d], t.Data[k*t.Stride+k:k*t.Stride+d])
	}
	piv := make([]int, d)
	for i := range piv {
		piv[i] = i
	}
	return &pivChol{u: u, piv: piv, ipiv: piv}
}

// dlamchE is LAPACK's relative machine precision dlamch('E') = 2⁻⁵³, which
// dpstrf's default tolerance uses.
const dlamchE = 0x1p-53

// rank returns the number of rows of U.
func (f *pivChol) rank() int { return f.u.RawMatrix().Rows }

// permute returns x P for an m×d x: column j of the result is column
// piv[j] of x, so that x Gᵀ = (x P) Uᵀ.
func (f *pivChol) permute(x *mat.Dense) *mat.Dense {
	m, d := x.Dims()
	out := mat.NewDense(m, d, nil)
	xr, or := x.RawMatrix(), out.RawMatrix()
	for i := 0; i < m; i++ {
		src := xr.Data[i*xr.Stride : i*xr.Stride+d]
		dst := or.Data[i*or.Stride : i*or.Stride+d]
		for j, c := range f.piv {
			dst[j] = src[c]
		}
	}
	return out
}

// mulUT returns alpha · b Uᵀ for an m×d b already in U's column order
// (b = x P). U is upper trapezoidal, so column k of the product only
// needs columns k..d-1 of b: the strips below skip the zero triangle and
// halve the flops of a plain product.
func (f *pivChol) mulUT(alpha float64, b *mat.Dense) *mat.Dense {
	const strip = 128
	m, d := b.Dims()
	r := f.rank()
	out := mat.NewDense(m, r, nil)
	br, ur, or := b.RawMatrix(), f.u.RawMatrix(), out.RawMatrix()
	for k0 := 0; k0 < r; k0 += strip {
		k1 := min(k0+strip, r)
		bs := blas64.General{Rows: m, Cols: d - k0, Stride: br.Stride, Data: br.Data[k0:]}
		us := blas64.General{Rows: k1 - k0, Cols: d - k0, Stride: ur.Stride, Data: ur.Data[k0*ur.Stride+k0:]}
		os := blas64.General{Rows: m, Cols: k1 - k0, Stride: or.Stride, Data: or.Data[k0:]}
		blas64.Gemm(blas.NoTrans, blas.Trans, alpha, bs, us, 0, os)
	}
	return out
}

// traceSqrtFactors returns Tr (S₁ S₂)^{1/2} for S₁ = G₁ᵀ G₁ and
// S₂ = G₂ᵀ G₂: the nuclear norm of G₂ G₁ᵀ = (G₂ P₁) U₁ᵀ.
func traceSqrtFactors(f1, f2 *pivChol) (float64, error) {
	// G₂ P₁: column j is coordinate piv₁[j] of G₂ = U₂ P₂ᵀ, which is
	// column ipiv₂[piv₁[j]] of U₂.
	r2 := f2.rank()
	d := len(f1.piv)
	b := mat.NewDense(r2, d, nil)
	ur, br := f2.u.RawMatrix(), b.RawMatrix()
	for i := 0; i < r2; i++ {
		src := ur.Data[i*ur.Stride : i*ur.Stride+d]
		dst := br.Data[i*br.Stride : i*br.Stride+d]
		for j, c := range f1.piv {
			dst[j] = src[f2.ipiv[c]]
		}
	}
	return nuclearNorm(f1.mulUT(1, b))
}

// errNoConvergence is returned when LAPACK's iterative eigenvalue or
// singular value solver gives up, which happens only for pathological
// input.
var errNoConvergence = errors.New("frechet: eigenvalue/singular value iteration did not converge")

// nuclearNorm returns the sum of the singular values of a, by whichever
// route is faster on this build's LAPACK (see TraceSqrtProduct).
func nuclearNorm(a *mat.Dense) (float64, error) {
	if fastBLAS {
		return nuclearNormGram(a)
	}
	return nuclearNormSVD(a)
}

// nuclearNormSVD sums the singular values from a values-only SVD: error
// about ε‖A‖ per singular value.
func nuclearNormSVD(a *mat.Dense) (float64, error) {
	var svd mat.SVD
	if !svd.Factorize(a, mat.SVDNone) {
		return math.NaN(), errNoConvergence
	}
	var s float64
	for _, v := range svd.Values(nil) {
		s += v
	}
	return s, nil
}

// nuclearNormGram sums σᵢ = √λᵢ over the eigenvalues of the smaller of
// A Aᵀ and AᵀA (one SYRK, one values-only symmetric eigensolve): error
// about ε‖A‖²/(2σᵢ) per singular value, √ε‖A‖ for the tiny ones.
func nuclearNormGram(a *mat.Dense) (float64, error) {
	r, c := a.Dims()
	k := min(r, c)
	g := mat.NewSymDense(k, nil)
	if r <= c {
		blas64.Syrk(blas.NoTrans, 1, a.RawMatrix(), 0, g.RawSymmetric())
	} else {
		blas64.Syrk(blas.Trans, 1, a.RawMatrix(), 0, g.RawSymmetric())
	}
	return traceSqrtSym(g)
}

// traceSqrtSym returns Σ √max(λᵢ, 0) over the eigenvalues of the symmetric
// positive semidefinite g: rounding can make a zero eigenvalue slightly
// negative, and its square root would be NaN.
func traceSqrtSym(g *mat.SymDense) (float64, error) {
	s, _, err := sqrtEigenSum(g)
	return s, err
}

// sqrtEigenSum returns Σ √max(λᵢ, 0) and Σ min(λᵢ, 0) over the
// eigenvalues of the symmetric g.
func sqrtEigenSum(g *mat.SymDense) (s, neg float64, err error) {
	var es mat.EigenSym
	if !es.Factorize(g, false) {
		return math.NaN(), math.NaN(), errNoConvergence
	}
	for _, v := range es.Values(nil) {
		if v > 0 {
			s += math.Sqrt(v)
		} else {
			neg += v
		}
	}
	return s, neg, nil
}

// TraceSqrtOfProduct returns Tr M^{1/2} for a square matrix M known only as
// the product S₁ S₂ of two positive semidefinite matrices (so not
// symmetric): the sum of the square roots of its eigenvalues, which are
// real and non-negative in exact arithmetic. The eigenvalues come from
// the general (Hessenberg QR) eigensolver; rounding can give tiny
// negative real parts, clipped to 0, and small imaginary parts, dropped.
//
// This is the robust replacement for Tr(scipy.linalg.sqrtm(S₁ S₂)), which
// returns huge imaginary parts on some inputs (scipy 1.11). When S₁ and
// S₂ themselves are at hand, TraceSqrtProduct is faster and more accurate.
//
// Errors: M not square, no convergence, or an eigenvalue whose imaginary
// part exceeds 10⁻⁶ of the spectral radius (then M is not such a product).
func TraceSqrtOfProduct(m mat.Matrix) (float64, error) {
	r, c := m.Dims()
	if r != c {
		return math.NaN(), fmt.Errorf("frechet: trace of square root: matrix is %d×%d, not square", r, c)
	}
	var eig mat.Eigen
	if !eig.Factorize(m, mat.EigenNone) {
		return math.NaN(), errNoConvergence
	}
	vals := eig.Values(nil)
	var rho float64
	for _, v := range vals {
		rho = max(rho, math.Hypot(real(v), imag(v)))
	}
	var s float64
	for _, v := range vals {
		if math.Abs(imag(v)) > 1e-6*rho {
			return math.NaN(), fmt.Errorf("frechet: trace of square root: eigenvalue %g has imaginary part %g: not a product of two positive semidefinite matrices", real(v), imag(v))
		}
		if re := real(v); re > 0 {
			s += math.Sqrt(re)
		}
	}
	return s, nil
}

// DistanceToRef returns Distance(StatsOf(x, ddof), ref) without forming
// the d×d covariance of x when x has fewer rows than columns.
//
// With n < d rows, S_x = Xcᵀ Xc / (n - ddof) has rank at most n-1 (Xc are
// the centred rows), and the nonzero eigenvalues of S_x S_ref are those of
// the small symmetric matrix Z S_ref Zᵀ / (n - ddof), where Z is Xc
// rotated by a Householder reflection that maps the all-ones direction
// (along which the centred rows sum to zero) to the first row, which is
// then dropped: ZᵀZ = XcᵀXc, and Z has n-1 rows, so the exactly-zero
// eigenvalue never appears as rounding noise. Cost O(n d² + n² d) instead
// of O(d³). With n >= d it computes the statistics and calls Distance.
//
// For many calls against one reference, NewReference pays the O(d³)
// factorisation once and is faster still.
//
// ref is checked for positive semidefiniteness as Distance checks it
// (ErrNotPSD) with n >= d; with n < d only the O(d²) necessary condition
// on its entries and, along the samples' directions, the sign of the
// eigenvalues of Z Σ_ref Zᵀ can be checked without O(d³) work
// (NewReference checks fully).
func DistanceToRef(x *mat.Dense, ref Stats, ddof int) (float64, error) {
	n, d, err := checkSamples(x, ref, ddof)
	if err != nil {
		return math.NaN(), err
	}
	if n >= d {
		if err := CheckDistanceDim(d); err != nil {
			return math.NaN(), err
		}
		return Distance(StatsOf(x, ddof), ref)
	}
	mu, z, sq := reduceCentred(x)
	den := float64(n - ddof)
	var tr float64
	if z != nil {
		m := z.RawMatrix().Rows
		sref := symToDense(ref.Sigma)
		t := mat.NewDense(m, d, nil)
		blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, z.RawMatrix(), sref.RawMatrix(), 0, t.RawMatrix())
		p := mat.NewDense(m, m, nil)
		blas64.Gemm(blas.NoTrans, blas.Trans, 1/den, t.RawMatrix(), z.RawMatrix(), 0, p.RawMatrix())
		g := mat.NewSymDense(m, nil)
		for i := 0; i < m; i++ {
			for j := i; j < m; j++ {
				g.SetSym(i, j, (p.At(i, j)+p.At(j, i))/2)
			}
		}
		var neg float64
		if tr, neg, err = sqrtEigenSum(g); err != nil {
			return math.NaN(), err
		}
		// g is Z Σ_ref Zᵀ/(n-ddof), positive semidefinite when Σ_ref is.
		if tg := trace(g); neg < -PSDTolerance*tg {
			return math.NaN(), fmt.Errorf("frechet: %w", &PSDError{Which: "reference statistics", Reason: fmt.Sprintf("%v: along the samples' directions it has negative eigenvalues summing to %.6g (%.2g of the trace %.6g)",
				ErrNotPSD, neg, neg/tg, tg)})
		}
	}
	return assemble(mu, ref.Mu, sq/den, trace(ref.Sigma), tr)
}

// checkSamples validates rows x against reference statistics ref.
func checkSamples(x *mat.Dense, ref Stats, ddof int) (n, d int, err error) {
	if err := ref.check("reference statistics"); err != nil {
		return 0, 0, err
	}
	n, d = x.Dims()
	if d != ref.Dim() {
		return 0, 0, fmt.Errorf("frechet: dimension mismatch: samples have %d columns, reference has dimension %d", d, ref.Dim())
	}
	if ddof < 0 {
		return 0, 0, fmt.Errorf("frechet: ddof = %d is negative", ddof)
	}
	if n <= ddof {
		return 0, 0, fmt.Errorf("frechet: %d rows: a covariance with ddof = %d needs at least %d", n, ddof, ddof+1)
	}
	raw := x.RawMatrix()
	for i := 0; i < n; i++ {
		for j, v := range raw.Data[i*raw.Stride : i*raw.Stride+d] {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return 0, 0, fmt.Errorf("frechet: samples row %d, column %d: %g is not finite", i+1, j+1, v)
			}
		}
	}
	return n, d, nil
}

// reduceCentred returns the mean of the rows of x, an (n-1)×d matrix Z
// with ZᵀZ = XcᵀXc for the centred rows Xc (nil when n = 1), and
// ||Xc||²_F = Tr XcᵀXc.
//
// Z is H Xc without its first row, H the Householder reflection mapping
// u = 𝟙/√n to e₁: the rows of Xc sum to zero, so the first row of H Xc,
// uᵀXc, is zero, and the other rows keep everything else.
func reduceCentred(x *mat.Dense) (mu []float64, z *mat.Dense, sq float64) {
	n, d := x.Dims()
	raw := x.RawMatrix()
	// Mean by the corrected two-pass method, as in Accumulator.AddRows.
	mu = make([]float64, d)
	for i := 0; i < n; i++ {
		for j, v := range raw.Data[i*raw.Stride : i*raw.Stride+d] {
			mu[j] += v
		}
	}
	for j := range mu {
		mu[j] /= float64(n)
	}
	corr := make([]float64, d)
	for i := 0; i < n; i++ {
		for j, v := range raw.Data[i*raw.Stride : i*raw.Stride+d] {
			corr[j] += v - mu[j]
		}
	}
	for j := range mu {
		mu[j] += corr[j] / float64(n)
	}
	xc := mat.NewDense(n, d, nil)
	xr := xc.RawMatrix()
	for i := 0; i < n; i++ {
		src := raw.Data[i*raw.Stride : i*raw.Stride+d]
		dst := xr.Data[i*xr.Stride : i*xr.Stride+d]
		for j, v := range src {
			e := v - mu[j]
			dst[j] = e
			sq += e * e
		}
	}
	if n == 1 {
		return mu, nil, sq
	}
	// v = u - e₁, vᵀv = 2 - 2/√n, H = I - 2 v vᵀ / vᵀv; w = vᵀ Xc.
	rn := 1 / math.Sqrt(float64(n))
	w := corr
	clear(w)
	for i := 0; i < n; i++ {
		vi := rn
		if i == 0 {
			vi = rn - 1
		}
		blas64.Axpy(vi, blas64.Vector{N: d, Inc: 1, Data: xr.Data[i*xr.Stride:]}, blas64.Vector{N: d, Inc: 1, Data: w})
	}
	beta := 2 / (2 - 2*rn)
	z = mat.NewDense(n-1, d, nil)
	zr := z.RawMatrix()
	for i := 1; i < n; i++ {
		dst := zr.Data[(i-1)*zr.Stride : (i-1)*zr.Stride+d]
		copy(dst, xr.Data[i*xr.Stride:i*xr.Stride+d])
		blas64.Axpy(-beta*rn, blas64.Vector{N: d, Inc: 1, Data: w}, blas64.Vector{N: d, Inc: 1, Data: dst})
	}
	return mu, z, sq
}

// check validates statistics before any arithmetic, naming them by which.
func (s Stats) check(which string) error {
	d := len(s.Mu)
	if d == 0 {
		return statsErrorf(which, "empty mean vector")
	}
	if s.Sigma == nil {
		return statsErrorf(which, "no covariance matrix")
	}
	if sd := s.Sigma.SymmetricDim(); sd != d {
		return statsErrorf(which, "covariance is %d×%d but the mean has length %d", sd, sd, d)
	}
	for i, v := range s.Mu {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return statsErrorf(which, "mean[%d] = %g is not finite", i, v)
		}
	}
	raw := s.Sigma.RawSymmetric()
	for i := 0; i < d; i++ {
		for j, v := range raw.Data[i*raw.Stride+i : i*raw.Stride+d] {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return statsErrorf(which, "covariance[%d][%d] = %g is not finite (fewer rows than the normalisation needs?)", i, i+j, v)
			}
		}
		if v := raw.Data[i*raw.Stride+i]; v < 0 {
			return statsErrorf(which, "covariance[%d][%d] = %g: a variance cannot be negative", i, i, v)
		}
	}
	if pe := pairViolation(s.Sigma); pe != nil {
		pe.which = which
		return pe
	}
	return nil
}

// StatsError is a defect of one set of statistics (which names it: "first
// statistics"); Msg says what, without the package and the name, for a
// caller that names the file instead.
type StatsError struct {
	Which, Msg string
}

func (e *StatsError) Error() string { return "frechet: " + e.Which + ": " + e.Msg }

func statsErrorf(which, format string, a ...any) error {
	return &StatsError{Which: which, Msg: fmt.Sprintf(format, a...)}
}

// PairError reports a covariance entry with |Σᵢⱼ| > √(Σᵢᵢ Σⱼⱼ) beyond
// PSDTolerance, which no positive semidefinite matrix has (every 2×2
// principal minor of one is non-negative). I and J are 0-based, I < J.
// It wraps ErrNotPSD.
type PairError struct {
	I, J  int
	Value float64 // Σᵢⱼ
	Bound float64 // √(Σᵢᵢ Σⱼⱼ)
	which string
}

func (e *PairError) Error() string {
	w := ""
	if e.which != "" {
		w = e.which + ": "
	}
	return fmt.Sprintf("frechet: %s%v: |covariance[%d][%d]| = %.6g exceeds √(covariance[%d][%d]·covariance[%d][%d]) = %.6g",
		w, ErrNotPSD, e.I, e.J, math.Abs(e.Value), e.I, e.I, e.J, e.J, e.Bound)
}

func (e *PairError) Unwrap() error { return ErrNotPSD }

// pairViolation returns the first entry (row by row of the upper
// triangle) of the finite s, with a non-negative diagonal, whose magnitude
// exceeds the geometric mean of its two variances by more than
// PSDTolerance of it plus PSDTolerance·10⁻⁴ of the largest variance, or
// nil. O(d²), no square roots in the inner loop.
func pairViolation(s *mat.SymDense) *PairError {
	raw := s.RawSymmetric()
	d := raw.N
	sd := make([]float64, d)
	var dmax float64
	for i := range sd {
		v := raw.Data[i*raw.Stride+i]
		sd[i] = math.Sqrt(v)
		dmax = max(dmax, v)
	}
	abs := PSDTolerance * 1e-4 * dmax
	for i := 0; i < d; i++ {
		row := raw.Data[i*raw.Stride : i*raw.Stride+d]
		for j := i + 1; j < d; j++ {
			b := sd[i] * sd[j]
			if math.Abs(row[j]) > (1+PSDTolerance)*b+abs {
				return &PairError{I: i, J: j, Value: row[j], Bound: b}
			}
		}
	}
	return nil
}

// trace returns the trace of s.
func trace(s mat.Symmetric) float64 {
	var t float64
	for i := 0; i < s.SymmetricDim(); i++ {
		t += s.At(i, i)
	}
	return t
}

// equalSym reports whether a and b are equal element for element.
func equalSym(a, b mat.Symmetric) bool {
	if a == b {
		return true
	}
	d := a.SymmetricDim()
	if b.SymmetricDim() != d {
		return false
	}
	as, ok1 := a.(*mat.SymDense)
	bs, ok2 := b.(*mat.SymDense)
	if ok1 && ok2 {
		ar, br := as.RawSymmetric(), bs.RawSymmetric()
		for i := 0; i < d; i++ {
			x := ar.Data[i*ar.Stride+i : i*ar.Stride+d]
			y := br.Data[i*br.Stride+i : i*br.Stride+d]
			for j := range x {
				if x[j] != y[j] {
					return false
				}
			}
		}
		return true
	}
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			if a.At(i, j) != b.At(i, j) {
				return false
			}
		}
	}
	return true
}

// symToDense returns s as a full d×d Dense, for the general matrix
// products that gonum runs in parallel (its Dsymm is serial).
func symToDense(s *mat.SymDense) *mat.Dense {
	d := s.SymmetricDim()
	m := mat.NewDense(d, d, nil)
	raw := s.RawSymmetric()
	mr := m.RawMatrix()
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			v := raw.Data[i*raw.Stride+j]
			mr.Data[i*mr.Stride+j] = v
			mr.Data[j*mr.Stride+i] = v
		}
	}
	return m
}
