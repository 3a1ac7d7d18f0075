package icljob

import (
	"context"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/format/jsonnum"
	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/metric/hallucination"
	"github.com/genlens/genlens/metric/hallucination/bayeslin"
	"github.com/genlens/genlens/metric/hallucination/categorical"
)

// The hallucination jobs estimate the posterior hallucination rate (PHR)
// of in-context learning: Jesson et al., "Estimating the Hallucination
// Rate of Generative AI", NeurIPS 2024 (see package hallucination).

// HallucinationSimulateRequest is a request of `genlens hallucination
// simulate`: Algorithm 1 against the exact PHR and the true hallucination
// rate on an exact Bayesian model, as in the paper's Figure 3. Start from
// NewHallucinationSimulateRequest, which holds the command line's
// defaults.
type HallucinationSimulateRequest struct {
	Model       string  `json:"model"`                                                           // linear or categorical
	Ns          string  `json:"ns" help:"context sizes n, comma-separated"`                      // context sizes, comma-separated
	Tasks       int     `json:"tasks" help:"tasks (mechanism, context, query) per context size"` // per context size
	Eps         float64 `json:"eps" help:"tolerance ε: responses outside the (1-ε)-likely set are hallucinations"`
	M           int     `json:"M"`                                                  // imagined datasets per estimate
	K           int     `json:"K"`                                                  // responses per THR estimate
	Extra       int     `json:"extra" help:"imagined examples per dataset (N - n)"` // imagined examples N - n
	Seed        uint64  `json:"seed" help:"random seed"`
	Concurrency int     `json:"concurrency" help:"tasks estimated at once"` // tasks estimated at once

	// The linear model (bayeslin).
	Features   string  `json:"features" help:"linear model: poly:DEG or relu:WIDTH:SEED features of x ~ U[-2, 2]"` // poly:DEG or relu:WIDTH:SEED
	Noise      float64 `json:"noise" help:"linear model: noise standard deviation σ"`
	PriorScale float64 `json:"prior_scale" help:"linear model: prior w ~ N(0, S² I) with this S"`
	// The categorical model (categorical.Symmetric).
	Groups int     `json:"groups"`
	Labels int     `json:"labels"`
	Alpha  float64 `json:"alpha" help:"categorical model: symmetric Dirichlet prior concentration"`
}

// NewHallucinationSimulateRequest returns a request with the command
// line's defaults: the paper's synthetic setting (hallucination.
// SyntheticDefaults) on its cubic regression task.
func NewHallucinationSimulateRequest() HallucinationSimulateRequest {
	d := hallucination.SyntheticDefaults
	return HallucinationSimulateRequest{Model: "linear", Ns: "2,4,8,16,32,64", Tasks: 200, Eps: d.Eps, M: d.M, K: d.K,
		Extra: d.Extra, Seed: 1, Concurrency: min(runtime.GOMAXPROCS(0), job.MaxWorkers),
		Features: "poly:3", Noise: 0.1, PriorScale: 1, Groups: 2, Labels: 3, Alpha: 0.5}
}

// Validate checks the fields that need no input file.
func (r *HallucinationSimulateRequest) Validate() (verr error) {
	defer func() { verr = job.WithDefault(verr, r, NewHallucinationSimulateRequest()) }()
	if err := job.CheckLimits("", job.Lim("tasks", r.Tasks, maxTasks), job.Lim("M", r.M, maxDrawsEach), job.Lim("K", r.K, maxDrawsEach), job.Lim("extra", r.Extra, maxExtra),
		job.Lim("concurrency", r.Concurrency, job.MaxWorkers), job.Lim("groups", r.Groups, maxCategories), job.Lim("labels", r.Labels, maxCategories)); err != nil {
		return err
	}
	_, _, err := r.plan()
	return err
}

// plan validates r and returns the context sizes and the task function of
// its model.
func (r *HallucinationSimulateRequest) plan() ([]int, hallucination.TaskFunc, error) {
	switch {
	case r.Model != "linear" && r.Model != "categorical":
		return nil, nil, fault.Fieldf("model", "{model} %q: want linear or categorical", r.Model)
	case r.Tasks < 1 || r.Tasks > maxTasks:
		return nil, nil, fault.Fieldf("tasks", "{tasks} %d: want a value in [1, %d]", r.Tasks, maxTasks)
	}
	if err := checkDraws(r.Eps, r.M, r.K, r.Extra, 1); err != nil {
		return nil, nil, err
	}
	if r.Concurrency < 1 {
		return nil, nil, fault.Fieldf("concurrency", "{concurrency} %d: want at least 1", r.Concurrency)
	}
	ns, err := parseNs(r.Ns)
	if err != nil {
		return nil, nil, err
	}
	if len(ns)*r.Tasks > maxTasks*10 {
		return nil, nil, fault.Fieldf("ns", "{ns}: %d context sizes x {tasks} %d: at most %d tasks in all", len(ns), r.Tasks, maxTasks*10)
	}
	if r.Model == "linear" {
		m, err := linearModel(r.Features, r.Noise, r.PriorScale)
		return ns, m.Task, err
	}
	// The model holds a Dirichlet draw per group and label: bound both
	// before allocating (a labels of 1e8 took 0.8 GB inside Validate).
	if r.Groups > maxCategories || r.Labels > maxCategories || r.Groups*r.Labels > maxCategoryCells {
		return nil, nil, fault.Fieldf("groups", "{groups} %d, {labels} %d: want each at most %d and their product at most %d", r.Groups, r.Labels, maxCategories, maxCategoryCells)
	}
	m := categorical.Symmetric(r.Groups, r.Labels, r.Alpha)
	if err := m.Validate(); err != nil {
		return nil, nil, fault.Fieldf("groups", "{groups} %d, {labels} %d, {alpha} %v: %s", r.Groups, r.Labels, r.Alpha, err)
	}
	return ns, m.Task, nil
}

// checkDraws checks the estimator's settings. min is the least M, K and
// extra may be: 1, or 0 where 0 stands for the backend's default.
// maxTasks bounds the simulated tasks per context size and maxExtra the
// imagined examples N - n: both size allocations, so a value such as
// 9e18 must fail as bad input rather than exhaust memory (the paper uses
// 200 tasks and 100 extra examples).
const (
	maxCategories    = 1 << 16
	maxCategoryCells = 1 << 22
	maxTasks         = 1_000_000
	maxExtra         = 100_000
	maxContextSizes  = 10_000 // the paper sweeps six
)

func checkDraws(eps float64, m, k, extra, min int) error {
	switch {
	case !(eps > 0 && eps < 1):
		return fault.Fieldf("eps", "{eps} %v: want a value in (0, 1)", eps)
	case min > 0 && (m < 1 || k < 1 || extra < 1):
		return fault.Fieldf("M", "{M} %d, {K} %d, {extra} %d: want positive values", m, k, extra)
	case m < 0 || k < 0 || extra < 0:
		return fault.Fieldf("M", "{M} %d, {K} %d, {extra} %d: want positive values (0: the backend's default)", m, k, extra)
	case extra > maxExtra:
		return fault.Fieldf("extra", "{extra} %d imagined examples: want at most %d", extra, maxExtra)
	case float64(m)*float64(k) > hallucination.MaxDraws:
		return fault.Fieldf("M", "{M} %d x {K} %d = %.3g responses per query: want at most %.0g", m, k, float64(m)*float64(k), hallucination.MaxDraws)
	}
	return nil
}

func parseNs(s string) ([]int, error) {
	var ns []int
	for _, p := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || n < 0 || n > 100000 {
			return nil, fault.Fieldf("ns", "{ns} %q: want comma-separated context sizes in [0, 100000]", s)
		}
		if len(ns) == maxContextSizes {
			return nil, fault.Fieldf("ns", "{ns}: at most %d context sizes", maxContextSizes)
		}
		if slices.Contains(ns, n) {
			return nil, fault.Fieldf("ns", "{ns} %q: context size %d given twice", s, n)
		}
		ns = append(ns, n)
	}
	return ns, nil
}

func linearModel(features string, noise, priorScale float64) (bayeslin.Model, error) {
	feat, err := bayeslin.ParseFeatures(features)
	if err != nil {
		return bayeslin.Model{}, fault.Fieldf("features", "{features}: %s", err)
	}
	m := bayeslin.Model{Features: feat, Noise: noise, PriorScale: priorScale}
	if _, err := m.Posterior(nil); err != nil {
		return m, fault.Fieldf("noise", "{noise} %v, {prior_scale} %v: %s", noise, priorScale, err)
	}
	return m, nil
}

// HallucinationSimulateResult is the result of `genlens hallucination
// simulate`; it marshals to the command's --json document.
type HallucinationSimulateResult struct {
	Rows     []HallucinationSweep          `json:"rows"`
	Settings HallucinationSimulateSettings `json:"settings"`

	// Tasks holds every task: Tasks[i][t] is task t at context size
	// Rows[i].N.
	Tasks [][]hallucination.Task `json:"-"`
}

// HallucinationSweep is one context size of a simulation
// (hallucination.Sweep).
type HallucinationSweep struct {
	N             int         `json:"n"`
	PHRMean       jsonnum.Num `json:"phr_mean"`
	THRMean       jsonnum.Num `json:"thr_mean"`
	ExactPHRMean  jsonnum.Num `json:"exact_phr_mean"`
	MAEPHRExact   jsonnum.Num `json:"mae_phr_vs_exact"`
	MAEPHRTHR     jsonnum.Num `json:"mae_phr_vs_thr"`
	R2PHRTHR      jsonnum.Num `json:"r2_phr_vs_thr"` // null when the PHR or the THR is constant over the tasks
	Tasks         int         `json:"tasks"`
	PHRStdErrMean jsonnum.Num `json:"phr_stderr_mean"`
}

// HallucinationSimulateSettings echoes the settings of a simulation. The
// fields are in alphabetical order of their keys, as the document had
// them when it was a map; the model's fields are left out for the other
// model.
type HallucinationSimulateSettings struct {
	K          int     `json:"K"`
	M          int     `json:"M"`
	Alpha      float64 `json:"alpha,omitempty"`
	Eps        float64 `json:"eps"`
	Extra      int     `json:"extra"`
	Features   string  `json:"features,omitempty"` // as parsed: "poly:3"
	Groups     int     `json:"groups,omitempty"`
	Labels     int     `json:"labels,omitempty"`
	Model      string  `json:"model"`
	Noise      float64 `json:"noise,omitempty"`
	PriorScale float64 `json:"prior_scale,omitempty"`
	Seed       uint64  `json:"seed"`
	Tasks      int     `json:"tasks"`
}

// HallucinationSimulate runs `genlens hallucination simulate`, reporting
// the tasks done through env.Progress.
func HallucinationSimulate(ctx context.Context, env job.Env, req HallucinationSimulateRequest) (*HallucinationSimulateResult, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	ns, task, err := req.plan()
	if err != nil {
		return nil, err
	}
	s := HallucinationSimulateSettings{K: req.K, M: req.M, Eps: req.Eps, Extra: req.Extra, Model: req.Model, Seed: req.Seed, Tasks: req.Tasks}
	if req.Model == "linear" {
		feat, _ := bayeslin.ParseFeatures(req.Features) // checked by plan
		s.Features, s.Noise, s.PriorScale = feat.String(), req.Noise, req.PriorScale
	} else {
		s.Groups, s.Labels, s.Alpha = req.Groups, req.Labels, req.Alpha
	}
	// One task per worker: the tasks, not the imagined datasets of one
	// task, are what there are many of.
	opt := hallucination.Options{Eps: req.Eps, M: req.M, K: req.K, Extra: req.Extra, Concurrency: 1}
	tasks, err := hallucination.Simulate(ctx, task, ns, req.Tasks, hallucination.SimulateOptions{
		Options: opt, Seed: req.Seed, Workers: req.Concurrency, Progress: env.Progress})
	if err != nil {
		return nil, err
	}
	return NewHallucinationSimulateResult(tasks, s), nil
}

// NewHallucinationSimulateResult builds the result document of simulated
// tasks (as hallucination.Simulate returns them).
func NewHallucinationSimulateResult(tasks [][]hallucination.Task, s HallucinationSimulateSettings) *HallucinationSimulateResult {
	out := &HallucinationSimulateResult{Settings: s, Tasks: tasks}
	for _, w := range hallucination.Summarize(tasks) {
		out.Rows = append(out.Rows, HallucinationSweep{N: w.N, PHRMean: jsonnum.Num(w.PHRMean), THRMean: jsonnum.Num(w.THRMean),
			ExactPHRMean: jsonnum.Num(w.ExactPHRMean), MAEPHRExact: jsonnum.Num(w.MAEPHRExact), MAEPHRTHR: jsonnum.Num(w.MAEPHRTHR),
			R2PHRTHR: jsonnum.Num(w.R2PHRTHR), Tasks: w.Tasks, PHRStdErrMean: jsonnum.Num(w.PHRStdErrMean)})
	}
	return out
}
