package linalg

// backend names the BLAS implementation in use; openblas.go overrides it.
var backend = "gonum (pure Go)"

// Backend reports which BLAS/LAPACK implementation this binary uses.
func Backend() string { return backend }
