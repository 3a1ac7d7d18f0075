package simdblas_test

import (
	"fmt"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/internal/tensor/simdblas"
)

// Installing the kernels under gonum, as package linalg does: every
// gonum product and factorisation afterwards runs on them, and on CPUs
// without AVX2/FMA the same calls run gonum's own code.
func ExampleImplementation() {
	blas64.Use(simdblas.Implementation{})
	a := mat.NewDense(2, 3, []float64{1, 2, 3, 4, 5, 6})
	var g mat.SymDense
	g.SymOuterK(1, a) // A Aᵀ through Dsyrk
	fmt.Println(mat.Formatted(&g))
	// Output:
	// ⎡14  32⎤
	// ⎣32  77⎦
}
