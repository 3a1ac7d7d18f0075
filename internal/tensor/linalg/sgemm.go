package linalg

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
)

// Sgemm computes C = alpha·op(A)·op(B) + beta·C on row-major float32
// matrices, where op transposes when the flag says so; m×k times k×n into
// m×n, with leading dimensions lda, ldb, ldc. It runs on the installed
// blas32 backend: internal/simdblas's AVX2/FMA kernel in the default
// build (gonum's SGEMM on other CPUs or with GENLENS_SIMD=off), OpenBLAS
// with -tags openblas, so that float32 networks such as the Inception-v3
// of package inception need not import cgo themselves.
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

// useKernel reports that internal/simdblas is installed (simd.go sets it).
var useKernel = false

// SgemmKernel reports whether Sgemm runs internal/simdblas's kernel.
// Callers that multiply one fixed matrix many times can then pack it once
// with simdblas.Pack and call simdblas.MulAddPacked, which computes
// exactly what Sgemm would with alpha = beta = 1.
func SgemmKernel() bool { return useKernel }
