package frechet

import "github.com/genlens/genlens/internal/tensor/membudget"

// CheckDim returns a *membudget.Error when the d × d covariance of d
// features does not fit the memory budget (package membudget). The
// covariance grows with the square of the row length, so two rows of
// 30,000 features (480 KB) ask for 7.2 GB: callers check d before they
// build an Accumulator or call StatsOf, which cannot fail; Distance,
// DistanceToRef and NewReference check it themselves.
func CheckDim(d int) error {
	return membudget.Check("the covariance of the features", 1, d, d)
}

// DistanceMatrices is how many d × d float64 matrices the Fréchet
// distance between two sets of d-dimensional statistics holds at its
// peak: the two covariances, their pivoted Cholesky factors and the
// product whose singular values give the trace term, partly freed as it
// goes. Measured: `compare` on two statistics files of 16,384 features
// (2 GiB a matrix) peaked at 7.3 GB, 3.4 matrices.
const DistanceMatrices = 4

// CheckDistanceDim returns a *membudget.Error when the Fréchet distance
// between two sets of d-dimensional statistics does not fit the memory
// budget: DistanceMatrices d × d matrices, not the one covariance that
// CheckDim prices.
func CheckDistanceDim(d int) error {
	return membudget.Check("the Fréchet distance", DistanceMatrices, d, d)
}
