//go:build !openblas

package linalg

import (
	"os"

	"github.com/genlens/genlens/internal/tensor/simdblas"

	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
)

// SIMDEnv is the environment variable that, set to "off", keeps the
// pure-Go build on gonum's own BLAS instead of internal/simdblas's
// AVX2/FMA kernels, for comparison or to rule them out.
const SIMDEnv = "GENLENS_SIMD"

// The default build installs internal/simdblas's kernels (DGEMM, SGEMM,
// DSYRK, DSYR2K) under gonum's BLAS when the CPU has AVX2 and FMA, so
// gonum's LAPACK (Cholesky, tridiagonalisation) runs on them too; every
// other routine stays gonum's.
func init() {
	if !simdblas.Available || os.Getenv(SIMDEnv) == "off" {
		return
	}
	blas64.Use(simdblas.Implementation{})
	blas32.Use(simdblas.Implementation{})
	backend = "simdblas (pure Go, AVX2/FMA kernels under gonum; float32 GEMM on " + simdblas.SgemmKernel() + ")"
	useKernel = true
	fastSyrk = true
	setThreads = func(n int) int {
		return simdblas.SetWorkers(n)
	}
}
