package bayeslin

import (
	"context"
	"math/rand/v2"

	"github.com/genlens/genlens/metric/hallucination"
)

// Task is a hallucination.TaskFunc: it draws a mechanism w from the prior,
// a context of n examples and a query x ~ U[Lo, Hi] from seed, estimates
// the PHR with hallucination.Estimate and adds the closed forms only an
// exact model has: the true hallucination rate given w, the exact PHR and
// the exact entropies.
func (m Model) Task(ctx context.Context, n int, seed uint64, opt hallucination.Options) (hallucination.Task, error) {
	r := rand.New(rand.NewPCG(seed, 1))
	f, err := m.SampleFunction(r)
	if err != nil {
		return hallucination.Task{}, err
	}
	d := f.Data(r, n)
	rm, err := m.resolved()
	if err != nil {
		return hallucination.Task{}, err
	}
	x := rm.Lo + (rm.Hi-rm.Lo)*r.Float64()
	post, err := m.Posterior(d)
	if err != nil {
		return hallucination.Task{}, err
	}
	res, err := hallucination.Estimate(ctx, m, d, x, opt)
	if err != nil {
		return hallucination.Task{}, err
	}
	tot, _, epi := post.Entropy(x)
	return hallucination.Task{N: n, X: x, PHR: res.PHR, StdErr: res.StdErr,
		THR: post.TrueRate(f, x, opt.Eps), ExactPHR: post.ExactPHR(x, opt.Eps),
		Total: res.Total, Aleatoric: res.Aleatoric, Epistemic: res.Epistemic, ExactTotal: tot, ExactEpistemic: epi}, nil
}
