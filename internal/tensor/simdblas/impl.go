package simdblas

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// Implementation is gonum's native BLAS with DGEMM, SGEMM, DSYRK, DSYR2K
// and DSYMV replaced by the kernels of this package. It satisfies
// blas.Float64 and blas.Float32 (blas64.Use, blas32.Use); every other
// routine is gonum's. DSYR2K and DSYMV are here for LAPACK's
// tridiagonalisation (dsytrd, the first step of the symmetric
// eigensolver): a values-only eigensolve at d = 2048 takes 11-19 s on
// gonum's own routines, 1.7 s with only DSYR2K left to gonum, 0.75 s with
// both replaced.
// Where Available is false every call goes to gonum.
//
// Calls with invalid arguments (negative sizes, short slices, leading
// dimensions too small, bad flags) go to gonum's routine, which panics
// with its usual message, as do the trivial ones (an empty C).
type Implementation struct {
	gonum.Implementation
}

var (
	_ blas.Float64 = Implementation{}
	_ blas.Float32 = Implementation{}
)

func isTrans(t blas.Transpose) (trans, ok bool) {
	switch t {
	case blas.NoTrans:
		return false, true
	case blas.Trans, blas.ConjTrans:
		return true, true
	}
	return false, false
}

// fits reports whether a rows×cols row-major matrix with leading
// dimension ld fits in a slice of length n (BLAS's rule: the last row
// needs only cols elements).
func fits(rows, cols, ld, n int) bool {
	if ld < max(1, cols) {
		return false
	}
	if rows == 0 || cols == 0 {
		return true
	}
	return n >= (rows-1)*ld+cols
}

// gemmArgs reports whether a GEMM call is valid and non-trivial.
func gemmArgs(tA, tB blas.Transpose, m, n, k, lda, la, ldb, lb, ldc, lc int) (ta, tb, ok bool) {
	ta, okA := isTrans(tA)
	tb, okB := isTrans(tB)
	if !okA || !okB || m <= 0 || n <= 0 || k < 0 {
		return false, false, false
	}
	ar, ac := m, k
	if ta {
		ar, ac = k, m
	}
	br, bc := k, n
	if tb {
		br, bc = n, k
	}
	if !fits(ar, ac, lda, la) || !fits(br, bc, ldb, lb) || !fits(m, n, ldc, lc) {
		return false, false, false
	}
	return ta, tb, true
}

// Dgemm computes C = alpha·op(A)·op(B) + beta·C.
func (impl Implementation) Dgemm(tA, tB blas.Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	ta, tb, ok := gemmArgs(tA, tB, m, n, k, lda, len(a), ldb, len(b), ldc, len(c))
	if !ok || !Available {
		impl.Implementation.Dgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	gemm(dgemmK, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, full)
}

// Sgemm computes C = alpha·op(A)·op(B) + beta·C in float32.
func (impl Implementation) Sgemm(tA, tB blas.Transpose, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	ta, tb, ok := gemmArgs(tA, tB, m, n, k, lda, len(a), ldb, len(b), ldc, len(c))
	if !ok || !Available {
		impl.Implementation.Sgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	gemm(sgemmK, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, full)
}

// syrkArgs reports whether a SYRK/SYR2K call is valid and non-trivial.
func syrkArgs(ul blas.Uplo, t blas.Transpose, n, k, lda, la, ldc, lc int) (trans bool, tri triangle, ok bool) {
	trans, okT := isTrans(t)
	switch ul {
	case blas.Upper:
		tri = upper
	case blas.Lower:
		tri = lower
	default:
		return false, 0, false
	}
	if !okT || n <= 0 || k < 0 {
		return false, 0, false
	}
	ar, ac := n, k
	if trans {
		ar, ac = k, n
	}
	if !fits(ar, ac, lda, la) || !fits(n, n, ldc, lc) {
		return false, 0, false
	}
	return trans, tri, true
}

// Dsyrk computes the ul triangle of C = alpha·A·Aᵀ + beta·C (t NoTrans,
// A n×k) or alpha·Aᵀ·A + beta·C (t Trans, A k×n); the other triangle is
// not touched. Blocks of C outside the triangle are skipped, so it costs
// about half a DGEMM.
func (impl Implementation) Dsyrk(ul blas.Uplo, t blas.Transpose, n, k int, alpha float64, a []float64, lda int, beta float64, c []float64, ldc int) {
	trans, tri, ok := syrkArgs(ul, t, n, k, lda, len(a), ldc, len(c))
	if !ok || !Available {
		impl.Implementation.Dsyrk(ul, t, n, k, alpha, a, lda, beta, c, ldc)
		return
	}
	// op(A)·op(A)ᵀ with op(A) = A or Aᵀ.
	gemm(dgemmK, trans, !trans, n, n, k, alpha, a, lda, a, lda, beta, c, ldc, tri)
}

// Dsyr2k computes the ul triangle of C = alpha·(A·Bᵀ + B·Aᵀ) + beta·C
// (t NoTrans, A and B n×k) or alpha·(Aᵀ·B + Bᵀ·A) + beta·C (t Trans, A
// and B k×n), as two triangular products.
func (impl Implementation) Dsyr2k(ul blas.Uplo, t blas.Transpose, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	trans, tri, ok := syrkArgs(ul, t, n, k, lda, len(a), ldc, len(c))
	ar, ac := n, k
	if trans {
		ar, ac = k, n
	}
	if !ok || !Available || !fits(ar, ac, ldb, len(b)) {
		impl.Implementation.Dsyr2k(ul, t, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	gemm(dgemmK, trans, !trans, n, n, k, alpha, a, lda, b, ldb, beta, c, ldc, tri)
	gemm(dgemmK, trans, !trans, n, n, k, alpha, b, ldb, a, lda, 1, c, ldc, tri)
}
