package evalstat

import (
	"errors"
	"math"
	"sort"
)

// AccuracyRejection returns the accuracy–rejection curve of answers with
// the given uncertainties (higher means less sure) and correctness:
// rejecting the k most uncertain answers leaves the n − k surest, whose
// accuracy is accuracy[k] at the rejection rate rejected[k] = k/n, for k
// = 0..n−1. Answers of equal uncertainty are rejected in an order drawn
// at random, and accuracy[k] is its expectation: within a group of ties
// each kept answer counts as the group's share of correct answers, so
// the curve does not depend on the input order.
//
// It returns an error if the lengths differ, if there is no answer, or
// if an uncertainty is NaN.
func AccuracyRejection(uncertainty []float64, correct []bool) (rejected, accuracy []float64, err error) {
	n := len(uncertainty)
	switch {
	case n != len(correct):
		return nil, nil, errors.New("evalstat: accuracy-rejection: length mismatch")
	case n == 0:
		return nil, nil, errors.New("evalstat: accuracy-rejection: no answers")
	}
	for _, u := range uncertainty {
		if math.IsNaN(u) {
			return nil, nil, errors.New("evalstat: accuracy-rejection: NaN uncertainty")
		}
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return uncertainty[order[a]] < uncertainty[order[b]] })
	// kept[m] is the expected number of correct answers among the m
	// surest, m = 1..n.
	kept := make([]float64, n+1)
	for s := 0; s < n; {
		e := s + 1
		for e < n && uncertainty[order[e]] == uncertainty[order[s]] {
			e++
		}
		c := 0
		for _, i := range order[s:e] {
			if correct[i] {
				c++
			}
		}
		share := float64(c) / float64(e-s)
		for m := s + 1; m <= e; m++ {
			kept[m] = kept[s] + float64(m-s)*share
		}
		s = e
	}
	rejected = make([]float64, n)
	accuracy = make([]float64, n)
	for k := 0; k < n; k++ {
		m := n - k
		rejected[k] = float64(k) / float64(n)
		accuracy[k] = kept[m] / float64(m)
	}
	return rejected, accuracy, nil
}

// AUARC is the area under the accuracy–rejection curve
// (AccuracyRejection): the mean of accuracy[k] over the n rejection rates
// k/n, as in Lin, Trivedi & Sun, "Generating with Confidence: Uncertainty
// Quantification for Black-box Large Language Models", TMLR 2024. It lies
// between the overall accuracy (an uncertainty that ranks at random does
// about as well) and its maximum, reached when every correct answer is
// surer than every incorrect one.
func AUARC(uncertainty []float64, correct []bool) (float64, error) {
	_, acc, err := AccuracyRejection(uncertainty, correct)
	if err != nil {
		return math.NaN(), err
	}
	var s float64
	for _, a := range acc {
		s += a
	}
	return s / float64(len(acc)), nil
}
