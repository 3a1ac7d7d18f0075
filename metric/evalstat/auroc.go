package evalstat

import (
	"errors"
	"math"
)

// AUROC returns the area under the ROC curve of score for the positive
// class: the probability that a randomly chosen positive scores higher than a
// randomly chosen negative, with ties counting one half.
//
// Ties are handled exactly as scikit-learn's roc_auc_score, whose
// trapezoidal area equals the Mann-Whitney U statistic with average ranks:
//
//	AUC = (sum of positive ranks - P(P+1)/2) / (P N)
//
// where P and N are the numbers of positives and negatives. Computing it
// from ranks costs O(n log n) rather than the O(P N) of comparing all pairs.
//
// AUROC returns an error if the lengths differ, if there is no positive or
// no negative (the curve is undefined), or if any score is NaN (NaN cannot
// be ordered, so the area would depend on an arbitrary placement).
func AUROC(score []float64, positive []bool) (float64, error) {
	if len(score) != len(positive) {
		return math.NaN(), errors.New("evalstat: AUROC: length mismatch")
	}
	for _, s := range score {
		if math.IsNaN(s) {
			return math.NaN(), errors.New("evalstat: AUROC: NaN score")
		}
	}
	var p int
	for _, b := range positive {
		if b {
			p++
		}
	}
	n := len(score) - p
	if p == 0 {
		return math.NaN(), errors.New("evalstat: AUROC: no positive sample")
	}
	if n == 0 {
		return math.NaN(), errors.New("evalstat: AUROC: no negative sample")
	}

	r := Ranks(score)
	var sum float64
	for i, b := range positive {
		if b {
			sum += r[i]
		}
	}
	// Average ranks are multiples of 1/2, so sum and the subtraction are
	// exact for any realistic n; only the final division rounds.
	fp, fn := float64(p), float64(n)
	u := sum - fp*(fp+1)/2
	return u / (fp * fn), nil
}
