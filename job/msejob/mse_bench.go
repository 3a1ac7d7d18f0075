package msejob

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/format/jsonnum"
	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/metric/checkmodel"
)

// BenchRequest is a request of `genlens mse bench`: compare the
// one-step check models with the two-step baselines over repeated trials
// of a protocol of "A one-step MSE estimation of models in production"
// (Section 4.1 on synthetic data, 4.2 on a LIBSVM regression file).
// Start from NewBenchRequest, which holds the command line's defaults.
type BenchRequest struct {
	// Dataset is synthetic-a, synthetic-b, synthetic-c, or a CSV file
	// with the target in column 0 and features after it.
	Dataset string   `json:"dataset" help:"synthetic-a, synthetic-b, synthetic-c, or a CSV file (target in column 0)"`
	Trials  int      `json:"trials" help:"number of trials"`
	Methods []string `json:"methods" help:"methods to compare; kstar-cal (K* calibrated on held-out folds, as mse fit) may be added"` // names of checkmodel.NewMethod
	Seed    uint64   `json:"seed" help:"random seed"`

	job.CSVOptions // sep: how the fields of CSV inputs are separated
}

// NewBenchRequest returns a request with the command line's defaults:
// 100 trials of every method.
func NewBenchRequest() BenchRequest {
	return BenchRequest{Trials: 100, Methods: slices.Clone(checkmodel.MethodNames), Seed: 1}
}

// Validate checks the fields that need no input file.
func (r *BenchRequest) Validate() (verr error) {
	defer func() { verr = job.WithDefault(verr, r, NewBenchRequest()) }()
	if err := job.CheckLimits("mse bench", job.Lim("trials", r.Trials, maxMSETrials), job.Lim("methods", len(r.Methods), maxMSEMethods)); err != nil {
		return err
	}
	if err := r.CSVOptions.ValidateSep(); err != nil {
		return err
	}
	_, err := r.methods()
	return err
}

// maxMSETrials bounds --trials, which sizes the per-trial results (the
// paper runs 100).
const maxMSETrials = 100_000

func (r *BenchRequest) methods() ([]checkmodel.Method, error) {
	switch ds := strings.ToLower(r.Dataset); {
	case r.Dataset == "":
		return nil, fault.Fieldf("dataset", "mse bench: {dataset} is required")
	case r.Trials < 1 || r.Trials > maxMSETrials:
		return nil, fault.Fieldf("trials", "mse bench: {trials} %d must be in [1, %d]", r.Trials, maxMSETrials)
	case strings.HasPrefix(ds, "synthetic") && mseNoise(ds) == "":
		return nil, fault.Fieldf("dataset", "mse bench: unknown dataset %q (want synthetic-a, synthetic-b, synthetic-c or a CSV file)", r.Dataset)
	}
	cfg := checkmodel.DefaultConfig()
	var methods []checkmodel.Method
	for _, name := range r.Methods {
		m, err := checkmodel.NewMethod(strings.TrimSpace(name), cfg)
		if err != nil {
			return nil, fault.Fieldf("methods", "%s", err)
		}
		for _, prev := range methods {
			if prev.Name() == m.Name() {
				return nil, fault.Fieldf("methods", "mse bench: method %q given twice", m.Name())
			}
		}
		methods = append(methods, m)
	}
	return methods, nil
}

// mseNoise returns the noise of a synthetic data set name, or "".
func mseNoise(ds string) checkmodel.Noise {
	switch ds {
	case "synthetic-a", "synthetic-b", "synthetic-c":
		return checkmodel.Noise(ds[len(ds)-1:])
	}
	return ""
}

// BenchResult is the result of `genlens mse bench`; it marshals to
// the command's --json document.
type BenchResult struct {
	Dataset  string                 `json:"dataset"`
	Trials   int                    `json:"trials"`
	Methods  map[string]MethodScore `json:"methods"`
	Best     string                 `json:"best"`
	Wilcoxon map[string]jsonnum.Num `json:"wilcoxon"` // p-value against the best method

	// Bench is the full comparison: every trial's estimates, the
	// methods in the order requested, why a method failed.
	Bench *checkmodel.BenchResult `json:"-"`
	// TableKey names the row of the paper's Tables 1 and 3 for this data
	// set (a key of checkmodel.PaperTables), or "".
	TableKey string `json:"-"`
}

// MethodScore is one method of an BenchResult: the mean and the
// standard deviation of its absolute errors over the trials.
type MethodScore struct {
	MAE    jsonnum.Num `json:"mae"`
	Std    jsonnum.Num `json:"std"`
	Failed int         `json:"failed"`
}

// The paper's protocols: 100 training and 10000 operational rows per
// synthetic trial (Section 4.1); windows of 500 + 500 contiguous rows of
// a LIBSVM file (Section 4.2).
const (
	mseSynthTrain, mseSynthOp   = 100, 10000
	mseWindowTrain, mseWindowOp = 500, 500
)

// Bench runs `genlens mse bench`. A CSV data set is read through
// env.FS; trials run in parallel (checkmodel.Bench) and are reported
// through env.Progress as they finish. The same request gives the same
// numbers, on any number of cores.
func Bench(ctx context.Context, env job.Env, req BenchRequest) (*BenchResult, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	methods, err := req.methods()
	if err != nil {
		return nil, err
	}
	cfg := checkmodel.DefaultConfig()
	var src checkmodel.TrialSource
	key := strings.ToLower(req.Dataset)
	if noise := mseNoise(key); noise != "" {
		src = checkmodel.SyntheticTrials(noise, mseSynthTrain, mseSynthOp, cfg)
	} else {
		_, a, err := dataio.ReadCSVSepFS(env.InputFS(), req.Dataset, req.Separator())
		if err != nil {
			return nil, err
		}
		if a.Shape[1] < 2 {
			return nil, &fault.InputError{File: req.Dataset, Msg: fmt.Sprintf("%d column: want the target in column 0 and features after it", a.Shape[1])}
		}
		xy, _ := a.Matrix()
		n, d := xy.Dims()
		x := mat.DenseCopyOf(xy.Slice(0, n, 1, d))
		y := mat.Col(nil, 0, xy)
		src, err = checkmodel.WindowTrials(x, y, mseWindowTrain, mseWindowOp, cfg)
		if err != nil {
			return nil, &fault.InputError{File: req.Dataset, Msg: fmt.Sprintf("%d rows: the protocol needs %d contiguous rows", n, mseWindowTrain+mseWindowOp)}
		}
		key = TableKey(req.Dataset)
	}
	var mu sync.Mutex
	done := 0
	res, err := checkmodel.Bench(ctx, src, checkmodel.BenchConfig{Trials: req.Trials, Methods: methods, Seed: req.Seed,
		Progress: func() {
			mu.Lock()
			defer mu.Unlock()
			done++
			env.ReportProgress(done, req.Trials)
		}})
	if err != nil {
		return nil, err
	}
	out := &BenchResult{Dataset: req.Dataset, Trials: req.Trials, Methods: map[string]MethodScore{}, Best: res.Best,
		Wilcoxon: map[string]jsonnum.Num{}, Bench: res, TableKey: key}
	for _, m := range res.Methods {
		out.Methods[m.Name] = MethodScore{MAE: jsonnum.Num(m.MAE), Std: jsonnum.Num(m.Std), Failed: m.Failed}
	}
	for k, p := range res.Wilcoxon {
		out.Wilcoxon[k] = jsonnum.Num(p)
	}
	return out, nil
}

// TableKey maps a LIBSVM file name to its row of the paper's Table 3
// ("space_ga_scale.csv" is "space-ga"), or "" for another file.
func TableKey(path string) string {
	base := strings.ToLower(filepath.Base(path))
	for _, k := range []string{"space_ga", "space-ga", "mg", "abalone", "cpusmall", "cadata"} {
		if strings.HasPrefix(base, k) {
			return strings.ReplaceAll(k, "_", "-")
		}
	}
	return ""
}

// FormatMAE formats an error as the paper's tables print it: three
// decimals, "NA" above 1000 or when undefined.
func FormatMAE(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) || v > 1000 {
		return "NA"
	}
	return fmt.Sprintf("%.3f", v)
}
