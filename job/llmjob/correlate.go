package llmjob

import (
	"context"
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/format/jsonnum"
	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/metric/kscore"
)

// CorrelateRequest is a request of `genlens correlate`: the
// distributional variance of each of several collections of paired models
// (e.g. the members of an ensemble saved at several training epochs), and
// the covariance and correlation between collections (Gruber & Buettner,
// "A Bias-Variance-Covariance Decomposition of Kernel Scores for
// Generative Models", ICML 2024, Eq. 9-11). Start from
// NewCorrelateRequest, which holds the command line's defaults.
type CorrelateRequest struct {
	// Files are the collections, each an (n, m, d) array: n members
	// (in the same order in every file) x m samples x d. The command line
	// takes them as arguments.
	Files  []string `json:"files"`
	Key    string   `json:"key,omitempty" help:"array name inside the .npz inputs (applies to every input file)"` // array inside the .npz inputs, the same in every file
	Kernel string   `json:"kernel"`
	Gamma  string   `json:"gamma,omitempty"` // rbf, laplacian, poly: dim, median or a number; "" means median

	job.CSVOptions // sep: how the fields of CSV inputs are separated
}

// NewCorrelateRequest returns a request with the command line's defaults.
func NewCorrelateRequest() CorrelateRequest { return CorrelateRequest{Kernel: "rbf"} }

// Validate checks the fields that need no input file.
func (r *CorrelateRequest) Validate() (verr error) {
	defer func() { verr = job.WithDefault(verr, r, NewCorrelateRequest()) }()
	if err := job.CheckLimits("correlate", job.Lim("files", len(r.Files), job.MaxListLen)); err != nil {
		return err
	}
	if err := r.CSVOptions.ValidateSep(); err != nil {
		return err
	}
	if len(r.Files) < 2 {
		return fault.Fieldf("files", "correlate: give at least two files, one (members, samples, d) array per collection")
	}
	_, err := job.KernelBandwidth("correlate", r.Kernel, r.Gamma, "median")
	return err
}

// CorrelateResult is the result of `genlens correlate`; it marshals to
// the command's --json document. Variance[i] is the unbiased estimator of
// Eq. 9; Covariance[i][i] is Eq. 10 of a file with itself, which
// Correlation (Eq. 11) uses for its self-terms, so the two differ by
// design (see the command's help). Correlations are null where a
// self-covariance is not positive.
type CorrelateResult struct {
	Files        []string        `json:"files"`
	Members      int             `json:"members"`
	Variance     []jsonnum.Num   `json:"variance"`
	Covariance   [][]jsonnum.Num `json:"covariance"`
	Correlation  [][]jsonnum.Num `json:"correlation"`
	EnsembleGain []jsonnum.Num   `json:"ensemble_gain"` // (n-1)/n Var: averaging independently trained members
	Kernel       string          `json:"kernel"`
}

// Correlate runs `genlens correlate`, reading the collections through
// env.FS and reporting the kernel sums done through env.Progress.
func Correlate(ctx context.Context, env job.Env, req CorrelateRequest) (*CorrelateResult, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	bw, _ := job.KernelBandwidth("correlate", req.Kernel, req.Gamma, "median")
	var epochs [][]*mat.Dense
	var first *dataio.Array
	for i, p := range req.Files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		a, err := dataio.ReadArrayFS(env.InputFS(), p, dataio.ReadOptions{Key: req.Key, Sep: req.Separator()})
		if err != nil {
			return nil, err
		}
		switch {
		case a.Rank() != 3:
			return nil, &fault.InputError{File: p, Msg: fmt.Sprintf("want a 3-D array (members, samples, d), got shape %v", a.Shape)}
		case a.Shape[0] < 2:
			return nil, &fault.InputError{File: p, Msg: fmt.Sprintf("%d member(s); the covariance needs at least 2 members (seeds) per file", a.Shape[0])}
		case a.Shape[1] < 2:
			return nil, &fault.InputError{File: p, Msg: fmt.Sprintf("%d sample(s) per member; need at least 2 (the variance averages over pairs of distinct samples)", a.Shape[1])}
		}
		if i == 0 {
			first = a
		} else {
			if err := dataio.CheckSameDim(req.Files[0], first, p, a); err != nil {
				return nil, err
			}
			if a.Shape[0] != first.Shape[0] {
				return nil, &fault.InputError{File: p, Msg: fmt.Sprintf("%d members, %s has %d (members must be paired across files)", a.Shape[0], req.Files[0], first.Shape[0])}
			}
		}
		epochs = append(epochs, job.SampleSets(a))
	}
	var all []*mat.Dense
	for _, e := range epochs {
		all = append(all, e...)
	}
	k, err := job.ResolveKernel(req.Kernel, bw, all, req.Files[0])
	if err != nil {
		return nil, err
	}
	cov, vars, err := kscore.CovarianceMatrix(kscore.WithProgress(ctx, env.ReportProgress), k, epochs)
	if err != nil {
		return nil, err
	}
	corr := kscore.CorrelationMatrix(cov)
	n := first.Shape[0]
	out := &CorrelateResult{Files: req.Files, Members: n, Variance: jsonnum.Nums(vars), Kernel: k.String()}
	for e := range req.Files {
		covRow, corrRow := make([]jsonnum.Num, len(req.Files)), make([]jsonnum.Num, len(req.Files))
		for g := range req.Files {
			covRow[g], corrRow[g] = jsonnum.Num(cov.At(e, g)), jsonnum.Num(corr.At(e, g))
		}
		out.Covariance = append(out.Covariance, covRow)
		out.Correlation = append(out.Correlation, corrRow)
		out.EnsembleGain = append(out.EnsembleGain, jsonnum.Num(kscore.EnsembleGain(vars[e], 0, n)))
	}
	return out, nil
}
