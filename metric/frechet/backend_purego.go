//go:build !openblas

package frechet

// openblas reports whether this binary was built with -tags openblas:
// LAPACKE's unpivoted Cholesky is faster than its pivoted one (factor),
// which gonum's LAPACK does not share. Routes that depend on the BLAS
// rather than on LAPACK ask linalg.Tuned (fastBLAS).
const openblas = false
