package linalg

import (
	"genlens/internal/sgemm"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
)

// Sgemm computes C = alpha·op(A)·op(B) + beta·C on row-major float32
// matrices, where op transposes when the flag says so; m×k times k×n into
// m×n, with leading dimensions lda, ldb, ldc.
//
// With -tags openblas it is OpenBLAS's cblas_sgemm (sgemm_openblas.go
// installs it for blas32), so that float32 networks such as the
// Inception-v3 of package inception run on the same backend as the
// float64 estimators without importing cgo themselves. In the pure-Go
// build, untransposed products with alpha = 1 on a CPU with AVX2 and FMA
// use internal/sgemm, a register-blocked kernel on one goroutine (about 3x
// gonum's SGEMM on convolutions); everything else goes to gonum's blas32.
func Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if useKernel && !transA && !transB && alpha == 1 && m > 0 && n > 0 && k > 0 {
		if beta != 1 {
			for i := 0; i < m; i++ {
				row := c[i*ldc : i*ldc+n]
				if beta == 0 {
					clear(row)
					continue
				}
				for j := range row {
					row[j] *= beta
				}
			}
		}
		sgemm.MulAdd(m, n, k, a, lda, b, ldb, c, ldc)
		return
	}
	ta, tb := blas.NoTrans, blas.NoTrans
	if transA {
		ta = blas.Trans
	}
	if transB {
		tb = blas.Trans
	}
	blas32.Implementation().Sgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// useKernel selects internal/sgemm; sgemm_openblas.go turns it off.
var useKernel = sgemm.Available

// SgemmKernel reports whether Sgemm runs internal/sgemm's kernel (the
// pure-Go build on a CPU with AVX2 and FMA). Callers that multiply one
// fixed matrix many times can then pack it once with internal/sgemm.Pack
// and call sgemm.MulAddPacked, which computes exactly what Sgemm would.
func SgemmKernel() bool { return useKernel }
