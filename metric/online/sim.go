package online

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/internal/tensor/par"
	"github.com/genlens/genlens/metric/frechet"
)

// Simulation configures a simulated online selection (Protocol 1) over
// pools of pre-computed samples, one pool per generator: rows are drawn
// from a pool instead of querying a model, and a generator's "true" score
// is its score on its whole pool.
//
// Draws. A batch is Batch rows drawn without replacement from the pool:
// each pass through a pool is a fresh random permutation, consumed Batch
// rows at a time. When fewer than Batch rows remain the pass ends, the
// leftover rows are skipped and a new permutation starts, so a batch never
// repeats a row. A pool smaller than one batch is an error; a pool
// exhausted before Steps·Batch rows is not: the run reshuffles and goes
// on. That choice keeps pools of a few thousand rows usable with the
// paper's budget (T = 1000, b = 5), and it costs nothing in meaning: with
// the 1/n covariance of the online estimates, k full passes through a
// pool whose size is a multiple of Batch give exactly the pool's
// statistics, the truth the regret is measured against.
//
// Common random numbers. Within a trial every algorithm draws the same
// sequence of batches from a given generator: its k-th batch from
// generator g is everyone's k-th batch from g. Each algorithm on its own
// still sees exactly Protocol 1; together they are compared on the same
// draws (a paired comparison with less noise), and the estimate of
// generator g after k batches, the expensive part of a step, is computed
// once per trial rather than once per algorithm.
//
// Randomness and concurrency. Trial i's draws from generator g come from
// a PCG generator seeded with par.Mix(Seed, i, g); trials run concurrently
// on Workers goroutines (internal/par) and are reduced in trial order, so
// the Result is bit-for-bit the same for the same Seed whatever the
// scheduling or the number of workers.
//
// Cancellation. RunFID and RunIS check their context at every step of
// every trial and return ctx.Err() once it is done.
type Simulation struct {
	// Steps is T, the number of picks per trial.
	Steps int
	// Batch is b, the rows drawn per pick.
	Batch int
	// Trials is the number of independent repetitions.
	Trials int
	// Seed seeds every trial.
	Seed uint64
	// Workers bounds the trials run at once; 0 means GOMAXPROCS.
	Workers int
	// Progress, if not nil, is called after each finished trial with the
	// number finished so far and the total. It is called from the worker
	// goroutines, but never concurrently, and done increases by one per
	// call.
	Progress func(done, total int)
}

// Result is the outcome of a Simulation.
type Result struct {
	// Metric is "fid" or "is".
	Metric string
	// Scores are the true scores of the generators, measured on their
	// whole pools: offline FID (n−1 covariance) against the reference, or
	// IS (one split).
	Scores []float64
	// Best is the index of the best score (lowest FID, highest IS; the
	// lowest index among equals).
	Best int
	// Steps, Batch, Trials and Seed repeat the configuration.
	Steps, Batch, Trials int
	Seed                 uint64
	// Algorithms holds one entry per rule, in the order given.
	Algorithms []AlgorithmResult
}

// AlgorithmResult is one algorithm's performance over the trials. Index t
// of a curve is step t+1. Standard deviations are over trials, population
// (ddof 0) as np.std.
type AlgorithmResult struct {
	// Name is the rule's name, e.g. "fid-ucb".
	Name string
	// Regret(t) = Σ_{s≤t} (score of the pick − best score) for FID,
	// (best score − score of the pick) for IS.
	Regret Curve
	// AverageRegret(t) = Regret(t)/t.
	AverageRegret Curve
	// OptimalPickRatio(t) is the fraction of steps s ≤ t that picked
	// the best generator.
	OptimalPickRatio Curve
	// Final values, at t = Steps.
	FinalRegret, FinalAverageRegret, FinalOptimalPickRatio MeanStd
	// Picks is the mean number of picks of each generator per trial.
	Picks []float64
	// TrialPicks[i][g] is the number of picks of generator g in trial i.
	TrialPicks [][]int
}

// Curve is a per-step mean and standard deviation over trials.
type Curve struct {
	Mean, Std []float64
}

// MeanStd is a mean and standard deviation over trials.
type MeanStd struct {
	Mean, Std float64
}

// simRule is what the FID and IS rules share: a validity check and a name.
type simRule interface {
	valid() bool
	String() string
}

// simPreamble checks what every simulation checks before it starts, in
// this order: the bonus constants (validate), that there are rules and
// each is known (kind names their metric in the error), and the pools
// against the rules' names, which it returns.
func simPreamble[R simRule](s Simulation, pools []*mat.Dense, rules []R, kind string, validate func() error) ([]string, error) {
	if err := validate(); err != nil {
		return nil, err
	}
	if len(rules) == 0 {
		return nil, errors.New("online: simulation: no algorithms")
	}
	names := make([]string, len(rules))
	for i, r := range rules {
		if !r.valid() {
			return nil, fmt.Errorf("online: simulation: unknown %s rule %v", kind, r)
		}
		names[i] = r.String()
	}
	if err := s.checkPools(pools, names); err != nil {
		return nil, err
	}
	return names, nil
}

// RunFID simulates the FID-based rules over feature-row pools against ref,
// with the bonus constants p.
func (s Simulation) RunFID(ctx context.Context, ref *FIDReference, pools []*mat.Dense, rules []FIDRule, p FIDParams) (*Result, error) {
	if ref == nil {
		return nil, errors.New("online: simulation: nil reference")
	}
	names, err := simPreamble(s, pools, rules, "FID", p.validate)
	if err != nil {
		return nil, err
	}
	truth := make([]float64, len(pools))
	for g, x := range pools {
		if _, c := x.Dims(); c != ref.Dim() {
			return nil, fmt.Errorf("online: simulation: pool %d has %d columns, reference dimension is %d", g, c, ref.Dim())
		}
		v, err := ref.Distance(x)
		if err != nil {
			return nil, fmt.Errorf("online: simulation: pool %d: %w", g, err)
		}
		truth[g] = v
	}
	m := simMetric{
		name:        "fid",
		lowerBetter: true,
		rules:       names,
		newEstimator: func() estimator {
			return newFIDEstimator(ref, p, rules)
		},
	}
	return s.run(ctx, m, pools, truth)
}

// RunIS simulates the IS-based rules over pools of class-probability rows.
func (s Simulation) RunIS(ctx context.Context, pools []*mat.Dense, rules []ISRule, p ISParams) (*Result, error) {
	names, err := simPreamble(s, pools, rules, "IS", p.validate)
	if err != nil {
		return nil, err
	}
	_, k := pools[0].Dims()
	if k < 2 {
		return nil, fmt.Errorf("online: simulation: pools have %d class, want at least 2", k)
	}
	truth := make([]float64, len(pools))
	for g, x := range pools {
		if _, c := x.Dims(); c != k {
			return nil, fmt.Errorf("online: simulation: pool %d has %d classes, pool 0 has %d", g, c, k)
		}
		v, _, err := frechet.InceptionScore(x, 1)
		if err != nil {
			return nil, fmt.Errorf("online: simulation: pool %d: %w", g, err)
		}
		truth[g] = v
	}
	m := simMetric{
		name:  "is",
		rules: names,
		newEstimator: func() estimator {
			return newISEstimator(k, p, rules)
		},
	}
	return s.run(ctx, m, pools, truth)
}

// checkPools validates the configuration and the pool sizes.
func (s Simulation) checkPools(pools []*mat.Dense, names []string) error {
	switch {
	case s.Steps < 1:
		return fmt.Errorf("online: simulation: %d steps, want at least 1", s.Steps)
	case s.Batch < 1:
		return fmt.Errorf("online: simulation: batch size %d, want at least 1", s.Batch)
	case s.Trials < 1:
		return fmt.Errorf("online: simulation: %d trials, want at least 1", s.Trials)
	case s.Workers < 0:
		return fmt.Errorf("online: simulation: %d workers, want at least 0", s.Workers)
	case len(pools) == 0:
		return errors.New("online: simulation: no pools")
	}
	seen := make(map[string]bool)
	for _, n := range names {
		if seen[n] {
			return fmt.Errorf("online: simulation: algorithm %s listed twice", n)
		}
		seen[n] = true
	}
	for g, x := range pools {
		if x == nil || x.IsEmpty() {
			return fmt.Errorf("online: simulation: pool %d is empty", g)
		}
		if n, _ := x.Dims(); n < s.Batch {
			return fmt.Errorf("online: simulation: pool %d has %d rows, fewer than one batch of %d", g, n, s.Batch)
		}
	}
	return nil
}

// simMetric is what the harness needs to know about a metric.
type simMetric struct {
	name         string
	lowerBetter  bool
	rules        []string
	newEstimator func() estimator // keys for every rule, in order
}

// trialResult is one trial's raw curves, per rule.
type trialResult struct {
	regret [][]float64 // [rule][step]
	hits   [][]int32   // [rule][step]: picks of the best so far
	picks  [][]int     // [rule][generator]
}

func (s Simulation) run(ctx context.Context, m simMetric, pools []*mat.Dense, truth []float64) (*Result, error) {
	best := 0
	for g, v := range truth {
		if (m.lowerBetter && v < truth[best]) || (!m.lowerBetter && v > truth[best]) {
			best = g
		}
	}
	gaps := make([]float64, len(truth))
	for g, v := range truth {
		if m.lowerBetter {
			gaps[g] = v - truth[best]
		} else {
			gaps[g] = truth[best] - v
		}
	}

	results := make([]trialResult, s.Trials)
	var (
		mu   sync.Mutex
		done int
	)
	err := par.For(ctx, s.Trials, s.Workers, func(ctx context.Context, i int) error {
		r, err := s.trial(ctx, m, pools, gaps, best, i)
		if err != nil {
			if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
				return err
			}
			return fmt.Errorf("online: simulation: trial %d: %w", i, err)
		}
		results[i] = r
		if s.Progress != nil {
			mu.Lock()
			done++
			s.Progress(done, s.Trials)
			mu.Unlock()
		}
		return nil
	})
	if err != nil {
		return nil, err
	}

	res := &Result{
		Metric: m.name,
		Scores: append([]float64(nil), truth...),
		Best:   best,
		Steps:  s.Steps, Batch: s.Batch, Trials: s.Trials, Seed: s.Seed,
	}
	for r, name := range m.rules {
		res.Algorithms = append(res.Algorithms, s.reduce(name, r, results, len(pools)))
	}
	return res, nil
}

// trial runs every rule for Steps steps on trial i's draws.
func (s Simulation) trial(ctx context.Context, m simMetric, pools []*mat.Dense, gaps []float64, best, i int) (trialResult, error) {
	nr, ng := len(m.rules), len(pools)
	streams := make([]*stream, ng)
	ests := make([]estimator, ng)
	// cache[g][k*nr+r] is rule r's key for generator g after k+1 batches.
	cache := make([][]float64, ng)
	buf := make([]float64, nr)
	out := trialResult{regret: make([][]float64, nr), hits: make([][]int32, nr), picks: make([][]int, nr)}
	keys := make([]float64, ng)
	for r := range nr {
		for g := range keys {
			keys[g] = math.Inf(-1)
		}
		visits := make([]int, ng)
		regret := make([]float64, s.Steps)
		hits := make([]int32, s.Steps)
		var total float64
		var nbest int32
		for t := range s.Steps {
			if err := ctx.Err(); err != nil {
				return out, err
			}
			g := argmin(keys)
			visits[g]++
			k := visits[g]
			for len(cache[g]) < k*nr {
				if streams[g] == nil {
					streams[g] = newStream(pools[g], s.Seed, i, g)
					ests[g] = m.newEstimator()
				}
				if err := ests[g].add(streams[g].next(s.Batch)); err != nil {
					return out, fmt.Errorf("generator %d: %w", g, err)
				}
				if err := ests[g].keys(buf); err != nil {
					return out, fmt.Errorf("generator %d: %w", g, err)
				}
				cache[g] = append(cache[g], buf...)
			}
			keys[g] = cache[g][(k-1)*nr+r]
			total += gaps[g]
			if g == best {
				nbest++
			}
			regret[t], hits[t] = total, nbest
		}
		out.regret[r], out.hits[r], out.picks[r] = regret, hits, visits
	}
	return out, nil
}

// reduce averages rule r's curves over the trials, in trial order.
func (s Simulation) reduce(name string, r int, results []trialResult, ng int) AlgorithmResult {
	T, n := s.Steps, len(results)
	a := AlgorithmResult{
		Name:             name,
		Regret:           Curve{Mean: make([]float64, T), Std: make([]float64, T)},
		AverageRegret:    Curve{Mean: make([]float64, T), Std: make([]float64, T)},
		OptimalPickRatio: Curve{Mean: make([]float64, T), Std: make([]float64, T)},
		Picks:            make([]float64, ng),
		TrialPicks:       make([][]int, n),
	}
	reg := make([]float64, n)
	ratio := make([]float64, n)
	for t := range T {
		steps := float64(t + 1)
		for i, tr := range results {
			reg[i] = tr.regret[r][t]
			ratio[i] = float64(tr.hits[r][t]) / steps
		}
		m, sd := meanStd(reg)
		a.Regret.Mean[t], a.Regret.Std[t] = m, sd
		a.AverageRegret.Mean[t], a.AverageRegret.Std[t] = m/steps, sd/steps
		a.OptimalPickRatio.Mean[t], a.OptimalPickRatio.Std[t] = meanStd(ratio)
	}
	last := T - 1
	a.FinalRegret = MeanStd{a.Regret.Mean[last], a.Regret.Std[last]}
	a.FinalAverageRegret = MeanStd{a.AverageRegret.Mean[last], a.AverageRegret.Std[last]}
	a.FinalOptimalPickRatio = MeanStd{a.OptimalPickRatio.Mean[last], a.OptimalPickRatio.Std[last]}
	for i, tr := range results {
		a.TrialPicks[i] = tr.picks[r]
		for g, c := range tr.picks[r] {
			a.Picks[g] += float64(c)
		}
	}
	for g := range a.Picks {
		a.Picks[g] /= float64(n)
	}
	return a
}

// meanStd returns the mean and the population standard deviation.
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

// stream draws batches from one pool for one trial (see Simulation).
type stream struct {
	pool *mat.Dense
	rng  *rand.Rand
	perm []int
	pos  int
}

func newStream(pool *mat.Dense, seed uint64, trial, g int) *stream {
	// par.Mix spreads (seed, trial, g) over both PCG words, so nearby
	// seeds, trials and generators give unrelated streams.
	s1 := par.Mix(seed, uint64(trial), uint64(g))
	return &stream{pool: pool, rng: rand.New(rand.NewPCG(s1, par.Mix(s1)))}
}

// next returns b rows drawn without replacement, starting a new pass when
// fewer than b rows of the current one remain.
func (st *stream) next(b int) *mat.Dense {
	n, d := st.pool.Dims()
	if st.perm == nil || st.pos+b > n {
		st.perm = st.rng.Perm(n)
		st.pos = 0
	}
	out := mat.NewDense(b, d, nil)
	raw, or := st.pool.RawMatrix(), out.RawMatrix()
	for i, src := range st.perm[st.pos : st.pos+b] {
		copy(or.Data[i*d:i*d+d], raw.Data[src*raw.Stride:src*raw.Stride+d])
	}
	st.pos += b
	return out
}
