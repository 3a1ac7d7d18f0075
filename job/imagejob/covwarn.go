package imagejob

import "fmt"

// singularWarning says, for a covariance estimated from n rows of d
// features, that it is singular when n ≤ d, and "" otherwise. The (n−1)
// covariance of n rows has rank at most n−1, so it needs n ≥ d+1 rows to
// be of full rank. A Fréchet distance from a singular covariance is still
// computed (the trace term handles rank deficiency), but the missing
// directions count as zero variance and the value is dominated by that
// rather than by the distributions: pytorch-fid warns that the sample
// count should exceed the dimension for the same reason. what names the
// rows (a file or folder); use says what the covariance is for.
func singularWarning(cmd, what string, n, d int, use string) string {
	if n <= 0 || n > d {
		return ""
	}
	return fmt.Sprintf("%s: %s has %d rows of %d dimensions: its covariance is singular (rank at most %d of %d), and %s is dominated by that rather than by the distributions; it needs at least %d rows (more than the dimension)",
		cmd, what, n, d, n-1, d, use, d+1)
}
