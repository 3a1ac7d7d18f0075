package checkmodel

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"sync"

	"github.com/genlens/genlens/internal/tensor/par"
	"github.com/genlens/genlens/metric/evalstat"
)

// BenchConfig sets up a comparison of methods over repeated trials.
type BenchConfig struct {
	Trials  int
	Methods []Method
	Seed    uint64
	// Workers is the number of trials run at once; 0 or less means one
	// per CPU (GOMAXPROCS). Results do not depend on it.
	Workers int
	// Progress, if not nil, is called after every finished trial (from
	// the worker goroutines, one call at a time).
	Progress func()
}

// MethodResult summarises one method over the trials.
type MethodResult struct {
	Name string
	// Estimates and AbsErrors are per trial; a method whose estimate is
	// not finite in a trial (a diverged variance network, say) gets an
	// absolute error of +Inf there.
	Estimates, AbsErrors []float64
	// MAE and Std are the mean and the population standard deviation
	// (ddof 0, numpy's default) of the absolute errors.
	MAE, Std float64
	// Failed counts trials where the method failed (training diverged)
	// or gave a non-finite estimate; FirstError says why, for the first.
	Failed     int
	FirstError error
}

// BenchResult is the outcome of Bench.
type BenchResult struct {
	Trials int
	// Empirical holds the realised operational MSE of every trial.
	Empirical []float64
	// Methods are in the order given.
	Methods []MethodResult
	// Best names the method with the lowest MAE (the first one on a
	// tie).
	Best string
	// Wilcoxon holds, for every other method, the two-sided p-value of
	// the Wilcoxon signed-rank test of its absolute errors against the
	// best method's, paired by trial; p >= 0.05 marks a method
	// comparable with the best, as the paper's tables do in bold. It is
	// NaN when both methods failed in the same trial.
	Wilcoxon map[string]float64
}

// Method returns the result of the named method, or nil.
func (r *BenchResult) Method(name string) *MethodResult {
	for i := range r.Methods {
		if r.Methods[i].Name == name {
			return &r.Methods[i]
		}
	}
	return nil
}

// Bench runs every method on every trial and compares their absolute
// errors |estimate - empirical MSE|.
//
// Trial t draws its data (and trains f) from a generator seeded by
// (Seed, t), and each method trains from its own generator seeded by
// (Seed, t, the method's name), so a result depends neither on the number
// of workers nor on which other methods run, or in what order.
//
// Trials run on cfg.Workers goroutines through internal/par, which holds
// BLAS to one thread meanwhile (the networks are too small for threaded
// products to pay). Once ctx is done Bench returns ctx.Err(): every
// network checks it between epochs, so a cancelled run stops within one
// epoch of every running trial, milliseconds for the paper's networks.
func Bench(ctx context.Context, src TrialSource, cfg BenchConfig) (*BenchResult, error) {
	if cfg.Trials < 1 {
		return nil, fmt.Errorf("checkmodel: %d trials", cfg.Trials)
	}
	if len(cfg.Methods) == 0 {
		return nil, errors.New("checkmodel: no methods")
	}
	seen := map[string]bool{}
	for _, m := range cfg.Methods {
		if seen[m.Name()] {
			return nil, fmt.Errorf("checkmodel: method %q given twice", m.Name())
		}
		seen[m.Name()] = true
	}
	res := &BenchResult{Trials: cfg.Trials, Empirical: make([]float64, cfg.Trials)}
	for _, m := range cfg.Methods {
		res.Methods = append(res.Methods, MethodResult{Name: m.Name(),
			Estimates: make([]float64, cfg.Trials), AbsErrors: make([]float64, cfg.Trials)})
	}
	// methodErrs[t][k]: why method k failed on trial t, if it did.
	methodErrs := make([][]error, cfg.Trials)
	for t := range methodErrs {
		methodErrs[t] = make([]error, len(cfg.Methods))
	}
	var mu sync.Mutex
	err := par.For(ctx, cfg.Trials, cfg.Workers, func(ctx context.Context, t int) error {
		if err := runTrial(ctx, src, cfg, t, res, methodErrs[t]); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("checkmodel: trial %d: %w", t+1, err)
		}
		if cfg.Progress != nil {
			mu.Lock()
			cfg.Progress()
			mu.Unlock()
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	best := -1
	for k := range res.Methods {
		m := &res.Methods[k]
		var s float64
		for _, e := range m.AbsErrors {
			s += e
		}
		m.MAE = s / float64(cfg.Trials)
		for t, e := range m.AbsErrors {
			if math.IsInf(e, 0) {
				m.Failed++
				if m.FirstError == nil {
					m.FirstError = methodErrs[t][k]
					if m.FirstError == nil {
						m.FirstError = fmt.Errorf("trial %d: estimate %v", t+1, m.Estimates[t])
					} else {
						m.FirstError = fmt.Errorf("trial %d: %w", t+1, m.FirstError)
					}
				}
			}
		}
		if math.IsInf(m.MAE, 0) {
			m.Std = math.Inf(1)
		} else {
			m.Std = evalstat.Std(m.AbsErrors, 0)
		}
		if best < 0 || m.MAE < res.Methods[best].MAE {
			best = k
		}
	}
	res.Best = res.Methods[best].Name
	res.Wilcoxon = map[string]float64{}
	for k, m := range res.Methods {
		if k == best {
			continue
		}
		w, err := evalstat.Wilcoxon(m.AbsErrors, res.Methods[best].AbsErrors)
		if err != nil {
			// Both failed in some trial (Inf - Inf): no test.
			res.Wilcoxon[m.Name] = math.NaN()
			continue
		}
		res.Wilcoxon[m.Name] = w.PValue
	}
	return res, nil
}

// runTrial runs trial t and writes its results into res (each trial owns
// its own index, so workers never write the same element).
func runTrial(ctx context.Context, src TrialSource, cfg BenchConfig, t int, res *BenchResult, errs []error) error {
	rng := rand.New(rand.NewPCG(cfg.Seed, uint64(t)<<20))
	tr, err := src(ctx, t, rng)
	if err != nil {
		return err
	}
	res.Empirical[t] = tr.Empirical
	for k, m := range cfg.Methods {
		mrng := rand.New(rand.NewPCG(cfg.Seed^nameSeed(m.Name()), uint64(t)))
		est, err := m.Estimate(ctx, tr.Train, Data{X: tr.Op.X, F: tr.Op.F}, mrng)
		if err != nil && ctx.Err() != nil {
			return ctx.Err() // cancelled, not a failure of the method
		}
		if err != nil {
			// The inputs are valid by construction, so an error is the
			// method failing on this trial (a diverged likelihood).
			est = math.NaN()
			errs[k] = err
		}
		r := &res.Methods[k]
		r.Estimates[t] = est
		if math.IsNaN(est) || math.IsInf(est, 0) {
			r.AbsErrors[t] = math.Inf(1)
		} else {
			r.AbsErrors[t] = math.Abs(est - tr.Empirical)
		}
	}
	return nil
}

// nameSeed is the FNV-1a hash of a method name: the part of a method's
// random stream that identifies it whatever its position in a run.
func nameSeed(name string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return h.Sum64()
}
