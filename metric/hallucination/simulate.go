package hallucination

import (
	"context"
	"fmt"
	"math"
	"sync"

	"github.com/genlens/genlens/internal/tensor/linalg"
	"github.com/genlens/genlens/internal/tensor/par"
	"github.com/genlens/genlens/metric/evalstat"
)

// MaxDraws bounds M·K, the responses Estimate samples for one query: each
// is kept until its quantile is taken, so an absurd value would exhaust
// memory instead of failing cleanly. 5·10⁷ is 600 times the paper's
// synthetic setting (M 40, K 2000).
const MaxDraws = 5e7

// Task is one simulated in-context learning task on an exact model: a
// mechanism f drawn from the prior, a context of N examples from f and a
// query X, with Algorithm 1's estimates beside the exact values that only
// an exact model can give.
type Task struct {
	N     int     // context size
	Index int     // task index within its context size, from 0
	X     float64 // the query (an input group's index for a classifier)

	PHR    float64 // Algorithm 1's estimate (Result.PHR)
	StdErr float64 // its Monte Carlo standard error (Result.StdErr)
	// THR is the true hallucination rate of the model's answers given f
	// (Definition 3).
	THR float64
	// ExactPHR is the posterior hallucination rate of Definition 4, from
	// the exact posterior.
	ExactPHR float64

	Total, Aleatoric, Epistemic float64 // Appendix D, estimated (Result)
	ExactTotal, ExactEpistemic  float64 // the same, from the exact posterior
}

// TaskFunc draws and estimates the task of context size n from its own
// seed: f, the context and the query come from seed, and opt (whose Seed
// is set apart) drives Estimate. bayeslin.Model.Task and
// categorical.Model.Task are TaskFuncs.
type TaskFunc func(ctx context.Context, n int, seed uint64, opt Options) (Task, error)

// SimulateOptions configures Simulate.
type SimulateOptions struct {
	// Options drives each task's Estimate (zero fields take their
	// defaults); its Seed is replaced by one derived from Seed, the
	// context size and the task index.
	Options Options
	// Seed fixes every task.
	Seed uint64
	// Workers bounds the tasks run at once (par.Workers: <= 0 means one
	// per CPU). The result does not depend on it.
	Workers int
	// Progress, when not nil, is called after each task with the tasks
	// done out of the total; never concurrently.
	Progress func(done, total int)
}

// Simulate runs count tasks at every context size in ns, as the paper's
// Figure 3 does, and returns tasks[i][t], task t at context size ns[i].
// Each task's randomness derives from opt.Seed, its context size and its
// index alone (par.Mix), so any task can be rerun on its own and the
// result does not depend on the number of workers.
func Simulate(ctx context.Context, task TaskFunc, ns []int, count int, opt SimulateOptions) ([][]Task, error) {
	if count < 1 {
		return nil, fmt.Errorf("hallucination: %d tasks per context size: want at least 1", count)
	}
	// Fill the defaults here, so that the TaskFunc's exact values use the
	// ε that Estimate uses.
	base, err := opt.Options.withDefaults()
	if err != nil {
		return nil, err
	}
	tasks := make([][]Task, len(ns))
	for i := range tasks {
		tasks[i] = make([]Task, count)
	}
	// One lease for the whole run (see Estimate), so that BLAS is not
	// switched back and forth between tasks when only one worker runs.
	defer linalg.SingleThreaded()()
	var (
		mu   sync.Mutex
		done int
	)
	total := len(ns) * count
	err = par.For(ctx, len(ns)*count, opt.Workers, func(ctx context.Context, j int) error {
		i, t := j/count, j%count
		o := base
		o.Seed = par.Mix(opt.Seed, uint64(ns[i]), uint64(t), 1)
		res, err := task(ctx, ns[i], par.Mix(opt.Seed, uint64(ns[i]), uint64(t)), o)
		if err != nil {
			return fmt.Errorf("n=%d, task %d: %w", ns[i], t+1, err)
		}
		res.N, res.Index = ns[i], t
		tasks[i][t] = res
		if opt.Progress != nil {
			mu.Lock()
			done++
			opt.Progress(done, total)
			mu.Unlock()
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return tasks, nil
}

// Sweep summarises the tasks of one context size: the means of Figure 3a
// and the calibration of Figure 3b.
type Sweep struct {
	N                              int
	PHRMean, THRMean, ExactPHRMean float64
	MAEPHRExact, MAEPHRTHR         float64 // mean |PHR - exact PHR|, mean |PHR - THR|
	R2PHRTHR                       float64 // squared Pearson correlation of PHR and THR; NaN when either is constant
	Tasks                          int
	PHRStdErrMean                  float64
}

// Summarize returns one Sweep per context size of tasks (as Simulate
// returns them).
func Summarize(tasks [][]Task) []Sweep {
	rows := make([]Sweep, len(tasks))
	for i, ts := range tasks {
		phr, thr, exact, se := make([]float64, len(ts)), make([]float64, len(ts)), make([]float64, len(ts)), make([]float64, len(ts))
		var maeE, maeT float64
		for t, x := range ts {
			phr[t], thr[t], exact[t], se[t] = x.PHR, x.THR, x.ExactPHR, x.StdErr
			maeE += math.Abs(x.PHR - x.ExactPHR)
			maeT += math.Abs(x.PHR - x.THR)
		}
		r2 := math.NaN()
		if r, err := evalstat.Pearson(phr, thr); err == nil {
			r2 = r * r
		}
		k := float64(len(ts))
		rows[i] = Sweep{PHRMean: evalstat.Mean(phr), THRMean: evalstat.Mean(thr), ExactPHRMean: evalstat.Mean(exact),
			MAEPHRExact: maeE / k, MAEPHRTHR: maeT / k, R2PHRTHR: r2, Tasks: len(ts), PHRStdErrMean: evalstat.Mean(se)}
		if len(ts) > 0 {
			rows[i].N = ts[0].N
		}
	}
	return rows
}
