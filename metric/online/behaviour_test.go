package online

import (
	"context"
	"testing"
)

// The behavioural tests run the protocol of Hu, Leung & Farnia,
// "An Optimism-based Approach to Online Evaluation of Generative Models"
// (arXiv 2024) (T = 1000, b = 5, 20
// trials) on synthetic generators with the default constants, the
// explicit ones of the paper's proofs. With those constants the bonuses are
// far larger than the gaps between generators at this budget, so the
// optimistic algorithms explore broadly; what separates them is which way
// their optimism leans. The tests assert what holds for every random family
// we tried and log the rest.

// logResult logs the final numbers of every algorithm.
func logResult(t *testing.T, res *Result) {
	t.Helper()
	t.Logf("best generator %d, true scores %.3f", res.Best, res.Scores)
	for _, a := range res.Algorithms {
		t.Logf("  %-9s optimal-pick ratio %.3f ± %.3f   regret %8.1f ± %6.1f   picks %.0f",
			a.Name, a.FinalOptimalPickRatio.Mean, a.FinalOptimalPickRatio.Std,
			a.FinalRegret.Mean, a.FinalRegret.Std, a.Picks)
	}
}

// trialRegrets returns each trial's final regret from its pick counts.
func trialRegrets(res *Result, a AlgorithmResult, lowerBetter bool) []float64 {
	out := make([]float64, len(a.TrialPicks))
	for i, tp := range a.TrialPicks {
		for g, c := range tp {
			gap := res.Scores[g] - res.Scores[res.Best]
			if !lowerBetter {
				gap = -gap
			}
			out[i] += float64(c) * gap
		}
	}
	return out
}

func maxOf(x []float64) float64 {
	m := x[0]
	for _, v := range x {
		m = max(m, v)
	}
	return m
}

// paperProtocol is the paper's experimental protocol (Section 7).
var paperProtocol = Simulation{Steps: 1000, Batch: 5, Trials: 20, Seed: 1}

// harmonic is the spectrum 1/(i+1): a few dominant directions and a long
// tail, as image embeddings have.
func harmonic(i int) float64 { return 1 / float64(i+1) }

func TestFIDUCBTruncationFamily(t *testing.T) {
	// The paper's truncation experiment (Section 7, Figure 4): twenty
	// variance-controlled generators, all more or less collapsed, the
	// best being the most diverse; the collapsed ones look deceptively
	// good on a few samples because the empirical FID of a handful of
	// rows is biased upwards in proportion to the variance.
	fam := newGaussFamily(t, 32, harmonic, linspace(0.05, 1, 20), 4000, 1)
	res, err := paperProtocol.RunFID(context.Background(), fam.ref, fam.pools, allFID, DefaultFIDParams())
	if err != nil {
		t.Fatal(err)
	}
	logResult(t, res)
	ucb, naive, greedy := res.Algorithms[0], res.Algorithms[1], res.Algorithms[2]
	for _, other := range []AlgorithmResult{naive, greedy} {
		if !(ucb.FinalOptimalPickRatio.Mean > other.FinalOptimalPickRatio.Mean) {
			t.Errorf("fid-ucb optimal-pick ratio %.3f is not above %s's %.3f", ucb.FinalOptimalPickRatio.Mean, other.Name, other.FinalOptimalPickRatio.Mean)
		}
		if !(ucb.FinalRegret.Mean < other.FinalRegret.Mean) {
			t.Errorf("fid-ucb regret %.1f is not below %s's %.1f", ucb.FinalRegret.Mean, other.Name, other.FinalRegret.Mean)
		}
	}
}

func TestFIDUCBMiddleFamily(t *testing.T) {
	// The family: covariance factors 0.1 to 1.9, so the best
	// generator (factor ≈ 1) is in the middle and the collapsed ones look
	// deceptively good on few samples. Greedy locks onto a collapsed one.
	//
	// Both optimistic bonuses grow with the generator's variance (every
	// term of Eq. 10 and 33 does), so optimism leans towards the
	// over-dispersed generators: the index Tr Σ_r (1 − √s)² − K(n)·s is
	// smallest at s ≈ 1 + 2K(n)/Tr Σ_r, and with the proofs' constants
	// K(n)/Tr Σ_r is above 1 for every n of this budget. FID-UCB's bonus,
	// with the 20 of Lemma E.7, is the larger of the two at d = 32 (the
	// dimension-free bound only wins for d ≳ 400 r(Σ)), so FID-UCB spends
	// more of its steps on the over-dispersed end: its regret is lower
	// than naive-UCB's (those generators are near-optimal), but its
	// optimal-pick ratio is not higher, so that part of the paper's claim
	// is logged, not asserted.
	fam := newGaussFamily(t, 32, harmonic, linspace(0.1, 1.9, 20), 4000, 1)
	res, err := paperProtocol.RunFID(context.Background(), fam.ref, fam.pools, allFID, DefaultFIDParams())
	if err != nil {
		t.Fatal(err)
	}
	logResult(t, res)
	ucb, naive, greedy := res.Algorithms[0], res.Algorithms[1], res.Algorithms[2]
	if !(ucb.FinalOptimalPickRatio.Mean > greedy.FinalOptimalPickRatio.Mean) {
		t.Errorf("fid-ucb optimal-pick ratio %.3f is not above greedy's %.3f", ucb.FinalOptimalPickRatio.Mean, greedy.FinalOptimalPickRatio.Mean)
	}
	for _, other := range []AlgorithmResult{naive, greedy} {
		if !(ucb.FinalRegret.Mean < other.FinalRegret.Mean) {
			t.Errorf("fid-ucb regret %.1f is not below %s's %.1f", ucb.FinalRegret.Mean, other.Name, other.FinalRegret.Mean)
		}
	}
	t.Logf("fid-ucb vs naive-ucb optimal-pick ratio: %.3f vs %.3f (not asserted, see the comment)",
		ucb.FinalOptimalPickRatio.Mean, naive.FinalOptimalPickRatio.Mean)
}

func TestISUCBFamily(t *testing.T) {
	// Class-probability rows over 50 classes, softmax of Gaussian logits:
	// generator g covers a prior of width 3 to 25 classes and is divided
	// by a temperature from 0.3 to 1, so diversity rises and confidence
	// falls along the family and the best IS is in the middle. On five
	// samples the confident, less diverse generators look best (the
	// empirical marginal entropy of five rows cannot exceed log 5 by
	// much), and greedy locks onto one of them in most trials.
	//
	// IS-UCB beats naive-UCB in both measures. Against greedy the mean is
	// a lottery: greedy's trials either lock onto the best (ratio ≈ 1) or
	// onto a collapsed generator (ratio ≈ 0), while IS-UCB, whose
	// per-class radii 7 log(4K/δ)/(3(n−1)) keep every unseen class near
	// 1/e for n in the hundreds, explores nearly uniformly at this budget.
	// What is asserted against greedy is its failure mode: greedy's worst
	// trial costs more than IS-UCB's worst trial.
	pools := classFamily(50, linspace(3, 25, 8), linspace(0.3, 1, 8), 4000, 1)
	res, err := paperProtocol.RunIS(context.Background(), pools, allIS, DefaultISParams())
	if err != nil {
		t.Fatal(err)
	}
	logResult(t, res)
	ucb, naive, greedy := res.Algorithms[0], res.Algorithms[1], res.Algorithms[2]
	if !(ucb.FinalOptimalPickRatio.Mean > naive.FinalOptimalPickRatio.Mean) {
		t.Errorf("is-ucb optimal-pick ratio %.3f is not above naive-ucb's %.3f", ucb.FinalOptimalPickRatio.Mean, naive.FinalOptimalPickRatio.Mean)
	}
	if !(ucb.FinalRegret.Mean < naive.FinalRegret.Mean) {
		t.Errorf("is-ucb regret %.1f is not below naive-ucb's %.1f", ucb.FinalRegret.Mean, naive.FinalRegret.Mean)
	}
	wu, wg := maxOf(trialRegrets(res, ucb, false)), maxOf(trialRegrets(res, greedy, false))
	if !(wu < wg) {
		t.Errorf("is-ucb's worst trial regret %.1f is not below greedy's %.1f", wu, wg)
	}
	t.Logf("worst-trial regret: is-ucb %.1f, greedy %.1f", wu, wg)
	t.Logf("is-ucb vs greedy: optimal-pick ratio %.3f vs %.3f, regret %.1f vs %.1f (not asserted, see the comment)",
		ucb.FinalOptimalPickRatio.Mean, greedy.FinalOptimalPickRatio.Mean, ucb.FinalRegret.Mean, greedy.FinalRegret.Mean)
}
