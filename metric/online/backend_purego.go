//go:build !openblas

package online

// openblas reports whether this binary was built with -tags openblas (see
// genlens/linalg): the fastest route to the eigenvalues of the small
// symmetric matrices of every FID step differs between the backends (see
// sumSqrtEigenUpper).
const openblas = false
