//go:build openblas

package linalg

import (
	"gonum.org/v1/gonum/blas/blas32"
	blasnetlib "gonum.org/v1/netlib/blas/netlib"
)

// openblas.go installs OpenBLAS for float64 only; float32 products (the
// convolutions of package inception) need the same swap for blas32.
func init() {
	blas32.Use(blasnetlib.Implementation{})
	fastSyrk = true
}
