package linalg

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
)

// Sgemm computes C = alpha·op(A)·op(B) + beta·C on row-major float32
// matrices, where op transposes when the flag says so; m×k times k×n into
// m×n, with leading dimensions lda, ldb, ldc.
//
// It goes through blas32's current implementation: gonum's pure-Go SGEMM
// by default and OpenBLAS's cblas_sgemm with -tags openblas
// (sgemm_openblas.go installs it), so that float32 networks such as the
// Inception-v3 of package inception run on the same backend as the
// float64 estimators without importing cgo themselves.
func Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	ta, tb := blas.NoTrans, blas.NoTrans
	if transA {
		ta = blas.Trans
	}
	if transB {
		tb = blas.Trans
	}
	blas32.Implementation().Sgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}
