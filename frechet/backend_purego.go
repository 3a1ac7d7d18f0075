//go:build !openblas

package frechet

// openblas reports whether this binary was built with -tags openblas. The
// fastest route to a few kernels differs between the backends (see
// addGramUpper and nuclearNorm), and a build tag is the one honest way to
// know which BLAS/LAPACK genlens/linalg installed.
const openblas = false
