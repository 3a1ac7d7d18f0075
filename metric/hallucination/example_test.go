package hallucination_test

import (
	"context"
	"fmt"

	"github.com/genlens/genlens/metric/hallucination"
	"github.com/genlens/genlens/metric/hallucination/bayeslin"
)

// The posterior hallucination rate of exact Bayesian cubic regression at
// one query, estimated from the model's samples and log-probabilities
// (Algorithm 1 with the paper's settings), next to its closed form.
func ExampleEstimate() {
	m := bayeslin.Model{Features: bayeslin.Poly{Degree: 3}, Noise: 0.1, PriorScale: 1}
	d := []bayeslin.Example{{X: -1.5, Y: 0.9}, {X: -0.4, Y: 0.2}, {X: 0.3, Y: -0.1}, {X: 1.2, Y: -1.1}}
	x := 1.8 // outside the context: the model is unsure here
	res, err := hallucination.Estimate(context.Background(), m, d, x, hallucination.Options{Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	post, _ := m.Posterior(d)
	fmt.Printf("PHR %.2f ± %.2f, exact %.2f\n", res.PHR, res.StdErr, post.ExactPHR(x, 0.05))
	fmt.Printf("epistemic uncertainty %.1f nats\n", res.Epistemic)
	// Output:
	// PHR 0.80 ± 0.01, exact 0.79
	// epistemic uncertainty 1.6 nats
}

// The ε-quantile is the ⌈εK⌉-th smallest value; hallucinations lie
// strictly below it.
func ExampleQuantile() {
	logp := []float64{-0.1, -2.3, -0.1, -0.2, -4.0, -0.1, -0.3, -0.2, -0.1, -0.1}
	fmt.Println(hallucination.Quantile(logp, 0.05), hallucination.Quantile(logp, 0.1), hallucination.Quantile(logp, 0.11))
	// Output: -4 -4 -2.3
}

// Which labels of a known distribution are hallucinations at ε: at 0.05
// the 4% label is kept, since the 1% and 4% labels together reach ε.
func ExampleOutsideLikelySet() {
	p := []float64{0.80, 0.15, 0.04, 0.01}
	fmt.Println(hallucination.OutsideLikelySet(p, 0.05))
	fmt.Println(hallucination.OutsideLikelySet(p, 0.2))
	// Output:
	// [false false false true]
	// [false false true true]
}

// Algorithm 1 against the exact PHR on the paper's cubic regression task,
// 20 tasks at each of two context sizes (Figure 3a in miniature): both
// fall towards ε as the context grows.
func ExampleSimulate() {
	m := bayeslin.Model{Features: bayeslin.Poly{Degree: 3}, Noise: 0.1, PriorScale: 1}
	opt := hallucination.SimulateOptions{Options: hallucination.Options{M: 10, K: 500, Extra: 50, Concurrency: 1}, Seed: 1}
	tasks, err := hallucination.Simulate(context.Background(), m.Task, []int{2, 32}, 20, opt)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range hallucination.Summarize(tasks) {
		fmt.Printf("n=%d: PHR %.2f, exact %.2f\n", s.N, s.PHRMean, s.ExactPHRMean)
	}
	// Output:
	// n=2: PHR 0.82, exact 0.82
	// n=32: PHR 0.07, exact 0.09
}
