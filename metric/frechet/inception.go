package frechet

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// ProbTolerance is how far a class-probability row may sum from 1 by
// default. Rows stored as float32 are often further off (a float32 softmax
// over 1000 classes is typically 1e-7 to 1e-5 from 1); NormalizeProbs
// accepts them at a looser tolerance and rescales them.
const ProbTolerance = 1e-6

// RowError reports an input row that breaks a precondition, such as a
// class-probability row that is not a distribution. Row and Col are
// 1-based (Col 0 when the whole row is at fault), so a caller that knows
// the file can say "probs.npy row 17: ..." (fault.InputError has the same
// fields).
type RowError struct {
	Row, Col int
	Msg      string
}

func (e *RowError) Error() string {
	if e.Col > 0 {
		return fmt.Sprintf("frechet: row %d, column %d: %s", e.Row, e.Col, e.Msg)
	}
	return fmt.Sprintf("frechet: row %d: %s", e.Row, e.Msg)
}

// InceptionScore returns the mean and standard deviation over splits of
// IS = exp(mean_i KL(p_i || p̄)), p_i the class-probability rows of the
// split and p̄ their mean (Hu, Leung & Farnia, 2024, Section 3.1: exp(H(p̄) - mean_i H(p_i))).
//
// Splits follow the original code of Salimans et al. and torch-fidelity:
// consecutive chunks with boundaries ⌊i n / splits⌋, so for uneven n the
// larger chunks come last (np.array_split would put them first). No rows
// are shuffled: torch-fidelity permutes the rows first by default
// (samples_shuffle, numpy seed 2020), so pass rows in that order to
// reproduce its per-split numbers. The standard deviation is the
// population one (ddof 0), as np.std. 0·log 0 counts as 0.
//
// Every row must be a distribution: finite, non-negative, summing to 1
// within ProbTolerance; otherwise the error is a *RowError naming the row.
// splits must be between 1 and the number of rows.
func InceptionScore(probs *mat.Dense, splits int) (mean, std float64, err error) {
	n, c := probs.Dims()
	if splits < 1 || splits > n {
		return math.NaN(), math.NaN(), fmt.Errorf("frechet: inception score: %d splits for %d rows (want 1 to %d)", splits, n, n)
	}
	if _, err := rowSums(probs, ProbTolerance); err != nil {
		return math.NaN(), math.NaN(), err
	}
	raw := probs.RawMatrix()
	scores := make([]float64, splits)
	q := make([]float64, c)
	for k := range scores {
		lo, hi := k*n/splits, (k+1)*n/splits
		clear(q)
		for i := lo; i < hi; i++ {
			for j, v := range raw.Data[i*raw.Stride : i*raw.Stride+c] {
				q[j] += v
			}
		}
		m := float64(hi - lo)
		for j := range q {
			q[j] /= m
		}
		var kl float64
		for i := lo; i < hi; i++ {
			for j, v := range raw.Data[i*raw.Stride : i*raw.Stride+c] {
				if v > 0 { // q[j] >= v/m > 0 here
					kl += v * (math.Log(v) - math.Log(q[j]))
				}
			}
		}
		scores[k] = math.Exp(kl / m)
	}
	mean, std = meanStd(scores)
	return mean, std, nil
}

// CheckProbs returns a *RowError for the first row of probs that is not a
// class distribution: a value that is not finite or is negative, or a sum
// further than tol from 1.
func CheckProbs(probs *mat.Dense, tol float64) error {
	_, err := rowSums(probs, tol)
	return err
}

// NormalizeProbs checks the rows of probs as CheckProbs does and then
// divides every row by its sum, so that rows rounded to float32 (or
// written with a few digits) become distributions to float64 precision.
// On error probs is unchanged.
func NormalizeProbs(probs *mat.Dense, tol float64) error {
	sums, err := rowSums(probs, tol)
	if err != nil {
		return err
	}
	raw := probs.RawMatrix()
	for i, s := range sums {
		row := raw.Data[i*raw.Stride : i*raw.Stride+raw.Cols]
		for j := range row {
			row[j] /= s
		}
	}
	return nil
}

// rowSums returns the row sums of probs after checking every row is a
// distribution within tol.
func rowSums(probs *mat.Dense, tol float64) ([]float64, error) {
	n, c := probs.Dims()
	raw := probs.RawMatrix()
	sums := make([]float64, n)
	for i := 0; i < n; i++ {
		var s float64
		for j, v := range raw.Data[i*raw.Stride : i*raw.Stride+c] {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, &RowError{Row: i + 1, Col: j + 1, Msg: fmt.Sprintf("probability %g is not finite", v)}
			}
			if v < 0 {
				return nil, &RowError{Row: i + 1, Col: j + 1, Msg: fmt.Sprintf("probability %g is negative", v)}
			}
			s += v
		}
		if !(math.Abs(s-1) <= tol) {
			return nil, &RowError{Row: i + 1, Msg: fmt.Sprintf("probabilities sum to %.9g, not 1 (tolerance %g)", s, tol)}
		}
		sums[i] = s
	}
	return sums, nil
}

// meanStd returns the mean and the population (ddof 0) standard deviation,
// as np.mean and np.std.
func meanStd(x []float64) (mean, std float64) {
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	for _, v := range x {
		std += (v - mean) * (v - mean)
	}
	return mean, math.Sqrt(std / float64(len(x)))
}
