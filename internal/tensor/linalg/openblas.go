//go:build openblas

package linalg

// #cgo LDFLAGS: -lopenblas -llapacke
// void openblas_set_num_threads(int num_threads);
// int openblas_get_num_threads(void);
// int openblas_get_num_procs(void);
import "C"

import (
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
	blasnetlib "gonum.org/v1/netlib/blas/netlib"
	lapacknetlib "gonum.org/v1/netlib/lapack/netlib"
)

func init() {
	blas64.Use(blasnetlib.Implementation{})
	lapack64.Use(lapacknetlib.Implementation{})
	backend = "openblas (cgo)"
	setThreads = func(n int) int {
		prev := int(C.openblas_get_num_threads())
		if n < 1 {
			n = int(C.openblas_get_num_procs())
		}
		C.openblas_set_num_threads(C.int(n))
		return prev
	}
}
