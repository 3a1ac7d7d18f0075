package categorical

import (
	"context"
	"math/rand/v2"

	"github.com/genlens/genlens/metric/hallucination"
)

// exactDraws is the number of Dirichlet draws behind Posterior.PHR for
// more than two labels: a Monte Carlo standard error of at most
// 0.5/sqrt(20000) ≈ 0.0035, well below the estimator's own.
const exactDraws = 20000

// Task is a hallucination.TaskFunc: it draws a mechanism (one label
// distribution per group) from the prior, a context of n examples and a
// query group from seed, estimates the PHR with hallucination.Estimate and
// adds what only an exact model has: the true hallucination rate given
// the mechanism, the PHR of Definition 4 (Posterior.PHR) and the exact
// entropies.
func (m Model) Task(ctx context.Context, n int, seed uint64, opt hallucination.Options) (hallucination.Task, error) {
	r := rand.New(rand.NewPCG(seed, 2))
	truth, err := m.SampleTruth(r)
	if err != nil {
		return hallucination.Task{}, err
	}
	d := truth.Data(r, n)
	x := r.IntN(m.Groups)
	post, err := m.Posterior(d)
	if err != nil {
		return hallucination.Task{}, err
	}
	res, err := hallucination.Estimate(ctx, m, d, x, opt)
	if err != nil {
		return hallucination.Task{}, err
	}
	tot, _, epi := post.Entropy(x)
	return hallucination.Task{N: n, X: float64(x), PHR: res.PHR, StdErr: res.StdErr,
		THR: post.TrueRate(truth, x, opt.Eps), ExactPHR: post.PHR(x, opt.Eps, r, exactDraws),
		Total: res.Total, Aleatoric: res.Aleatoric, Epistemic: res.Epistemic, ExactTotal: tot, ExactEpistemic: epi}, nil
}

// ExactPHR is Posterior.PHR at the precision Task uses, its Dirichlet
// draws (for more than two labels) from seed, so that a query's exact PHR
// is reproducible on its own.
func (p *Posterior) ExactPHR(x int, eps float64, seed uint64) float64 {
	return p.PHR(x, eps, rand.New(rand.NewPCG(seed, 3)), exactDraws)
}
