package semantic

import (
	"errors"
	"fmt"
	"math"
)

// Clusters groups n answers greedily, as Kuhn et al. do: each answer joins
// the first cluster whose first member it mutually entails with, else
// starts a new one. entails(i, j) reports whether answer i entails answer
// j. It returns the cluster of each answer, numbered from 0 in order of
// first appearance.
func Clusters(n int, entails func(i, j int) (bool, error)) ([]int, error) {
	of := make([]int, n)
	var heads []int
	for i := 0; i < n; i++ {
		of[i] = -1
		for c, h := range heads {
			ab, err := entails(h, i)
			if err != nil {
				return nil, err
			}
			if !ab {
				continue
			}
			ba, err := entails(i, h)
			if err != nil {
				return nil, err
			}
			if ba {
				of[i] = c
				break
			}
		}
		if of[i] < 0 {
			of[i] = len(heads)
			heads = append(heads, i)
		}
	}
	return of, nil
}

// NumSets is the number of clusters of an assignment.
func NumSets(clusters []int) int {
	k := 0
	for _, c := range clusters {
		k = max(k, c+1)
	}
	return k
}

// SE is semantic entropy −Σ_c p(c) log p(c), p(c) = Σ_{i∈c} p(sᵢ) / Σᵢ p(sᵢ)
// from the samples' sequence log-probabilities logp (computed stably in
// log space).
func SE(clusters []int, logp []float64) (float64, error) {
	if len(clusters) == 0 {
		return 0, errors.New("no samples")
	}
	if len(logp) != len(clusters) {
		return 0, fmt.Errorf("%d log-probabilities for %d samples", len(logp), len(clusters))
	}
	k := NumSets(clusters)
	m := math.Inf(-1)
	for i, l := range logp {
		if math.IsNaN(l) || math.IsInf(l, 0) || l > 0 {
			return 0, fmt.Errorf("sample %d: log-probability %v", i, l)
		}
		m = math.Max(m, l)
	}
	w := make([]float64, k)
	var z float64
	for i, l := range logp {
		e := math.Exp(l - m)
		w[clusters[i]] += e
		z += e
	}
	return entropy(w, z), nil
}

// SEDiscrete is discrete semantic entropy: p(c) is the share of the samples
// in cluster c.
func SEDiscrete(clusters []int) (float64, error) {
	if len(clusters) == 0 {
		return 0, errors.New("no samples")
	}
	w := make([]float64, NumSets(clusters))
	for _, c := range clusters {
		w[c]++
	}
	return entropy(w, float64(len(clusters))), nil
}

func entropy(w []float64, z float64) float64 {
	var h float64
	for _, x := range w {
		if x > 0 {
			p := x / z
			h -= p * math.Log(p)
		}
	}
	return h
}

// SEMonteCarlo is semantic entropy as LM-Polygraph computes it by default
// (class probability "sum", entropy estimator "mean"): log p(c) is the
// log of the sum of its answers' sequence probabilities, not normalised,
// and the entropy is −(1/m) Σᵢ log p(c(sᵢ)), the Monte Carlo estimate over
// the m samples of Kuhn et al.'s code. It is kept beside SE to compare
// with LM-Polygraph's numbers; it is not SE.
func SEMonteCarlo(clusters []int, logp []float64) (float64, error) {
	if len(clusters) == 0 || len(logp) != len(clusters) {
		return 0, fmt.Errorf("%d log-probabilities for %d samples", len(logp), len(clusters))
	}
	k := NumSets(clusters)
	lc := make([]float64, k)
	for c := range lc {
		m := math.Inf(-1)
		for i, l := range logp {
			if clusters[i] == c {
				m = math.Max(m, l)
			}
		}
		var s float64
		for i, l := range logp {
			if clusters[i] == c {
				s += math.Exp(l - m)
			}
		}
		lc[c] = m + math.Log(s)
	}
	var h float64
	for _, c := range clusters {
		h -= lc[c]
	}
	return h / float64(len(clusters)), nil
}
