package frechet

import "github.com/genlens/genlens/membudget"

// CheckDim returns a *membudget.Error when the d × d covariance of d
// features does not fit the memory budget (package membudget). The
// covariance grows with the square of the row length, so two rows of
// 30,000 features (480 KB) ask for 7.2 GB: callers check d before they
// build an Accumulator or call StatsOf, which cannot fail; Distance,
// DistanceToRef and NewReference check it themselves.
func CheckDim(d int) error {
	return membudget.Check("the covariance of the features", 1, d, d)
}
