package llmjob

import (
	"context"
	"fmt"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/format/jsonnum"
	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/metric/kscore"
)

// DecomposeRequest is a request of `genlens decompose`: the terms of the
// expected kernel score of an ensemble, noise + bias + variance, estimated
// from samples alone (Gruber & Buettner, "A Bias-Variance-Covariance
// Decomposition of Kernel Scores for Generative Models", ICML 2024,
// Theorem 3.2). Start from NewDecomposeRequest, which holds the command
// line's defaults.
type DecomposeRequest struct {
	// Models are one file per model, (m, d) samples or (I, m, d) for I
	// input instances, or a single stacked file (n, m, d) or (n, I, m, d).
	Models      []string `json:"models" help:"model sample files (.npy/.npz/.csv); more may follow as arguments"`
	Targets     string   `json:"targets,omitempty" help:"target observations (.npy/.npz/.csv)"`                        // (l, d) or (I, l, d)
	Key         string   `json:"key,omitempty" help:"array name inside the .npz inputs (applies to every input file)"` // array inside the .npz inputs, the same in every file
	Kernel      string   `json:"kernel"`
	Gamma       string   `json:"gamma,omitempty"`                                                                 // rbf, laplacian, poly: dim, median or a number; "" means median
	PerInstance bool     `json:"per_instance" help:"also report the terms of every instance (conditional input)"` // also report every instance's terms

	job.CSVOptions // sep: how the fields of CSV inputs are separated
}

// NewDecomposeRequest returns a request with the command line's defaults.
func NewDecomposeRequest() DecomposeRequest { return DecomposeRequest{Kernel: "rbf"} }

// Validate checks the fields that need no input file.
func (r *DecomposeRequest) Validate() (verr error) {
	defer func() { verr = job.WithDefault(verr, r, NewDecomposeRequest()) }()
	if err := job.CheckLimits("decompose", job.Lim("models", len(r.Models), job.MaxListLen)); err != nil {
		return err
	}
	if err := r.CSVOptions.ValidateSep(); err != nil {
		return err
	}
	if len(r.Models) == 0 {
		return fault.Fieldf("models", "decompose: give at least one model file with {models}")
	}
	_, err := job.KernelBandwidth("decompose", r.Kernel, r.Gamma, "median")
	return err
}

// DecomposeResult is the result of `genlens decompose`; it marshals to
// the command's --json document. Terms that need targets are null
// without them; variance, bias and the identity gap are null for one
// model.
type DecomposeResult struct {
	NModels         int                `json:"n_models"`
	SamplesPerModel int                `json:"samples_per_model"` // the smallest count if they differ
	Instances       int                `json:"instances,omitempty"`
	Variance        jsonnum.Num        `json:"variance"`
	KernelEntropy   jsonnum.Num        `json:"kernel_entropy"`
	EnsembleGain    jsonnum.Num        `json:"ensemble_gain"`
	Noise           jsonnum.Num        `json:"noise"`
	Bias            jsonnum.Num        `json:"bias"`
	KernelScore     jsonnum.Num        `json:"kernel_score"`
	MMD2            jsonnum.Num        `json:"mmd2"`
	IdentityGap     jsonnum.Num        `json:"identity_gap"`
	Kernel          string             `json:"kernel,omitempty"`
	PerInstance     []*DecomposeResult `json:"per_instance,omitempty"`
	// Warnings explain numbers that look wrong but are not (a negative
	// estimate of a squared norm); absent when there is nothing to say.
	Warnings job.Messages `json:"warnings,omitempty"`
}

func newDecomposeResult(d kscore.Decomposition) *DecomposeResult {
	return &DecomposeResult{NModels: d.Models, SamplesPerModel: d.Samples, Variance: jsonnum.Num(d.Variance),
		KernelEntropy: jsonnum.Num(d.KernelEntropy), EnsembleGain: jsonnum.Num(d.EnsembleGain), Noise: jsonnum.Num(d.Noise),
		Bias: jsonnum.Num(d.Bias), KernelScore: jsonnum.Num(d.KernelScore), MMD2: jsonnum.Num(d.MMD2), IdentityGap: jsonnum.Num(d.IdentityGap)}
}

// Decompose runs `genlens decompose`, reading the samples through env.FS
// and reporting the kernel sums (or, conditional, the instances) done
// through env.Progress.
// It warns through env.Warn when the models have different sample counts.
func Decompose(ctx context.Context, env job.Env, req DecomposeRequest) (*DecomposeResult, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	bw, _ := job.KernelBandwidth("decompose", req.Kernel, req.Gamma, "median")
	opt := dataio.ReadOptions{Key: req.Key, Sep: req.Separator()}
	var arrays []*dataio.Array
	for _, p := range req.Models {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		a, err := dataio.ReadArrayFS(env.InputFS(), p, opt)
		if err != nil {
			return nil, err
		}
		arrays = append(arrays, a)
	}
	// models[i][c]: samples of model i for instance c (one instance when
	// unconditional).
	var models [][]*mat.Dense
	warning := "" // given once the decomposition succeeded
	first := arrays[0]
	conditional := false
	if len(arrays) == 1 && (first.Rank() == 3 || first.Rank() == 4) {
		conditional = first.Rank() == 4
		if err := needSamples(req.Models[0], first.Shape[first.Rank()-2], "per model"); err != nil {
			return nil, err
		}
		for i := 0; i < first.Shape[0]; i++ {
			models = append(models, job.SampleSets(first.Slice(i)))
		}
	} else {
		for i, a := range arrays {
			if err := checkModel(req.Models, arrays, i); err != nil {
				return nil, err
			}
			models = append(models, job.SampleSets(a))
		}
		conditional = first.Rank() == 3
		warning = sampleCountWarning(req.Models, arrays)
	}
	var targets []*mat.Dense
	if req.Targets != "" {
		y, err := dataio.ReadArrayFS(env.InputFS(), req.Targets, opt)
		if err != nil {
			return nil, err
		}
		wantRank := 2
		if conditional {
			wantRank = 3
		}
		if y.Rank() != wantRank {
			return nil, &fault.InputError{File: req.Targets, Msg: fmt.Sprintf("want a %d-D array of targets to match the models, got shape %v", wantRank, y.Shape)}
		}
		if err := dataio.CheckSameDim(req.Models[0], first, req.Targets, y); err != nil {
			return nil, err
		}
		if err := needSamples(req.Targets, y.Shape[y.Rank()-2], "of the targets"); err != nil {
			return nil, err
		}
		targets = job.SampleSets(y)
		if len(targets) != len(models[0]) {
			return nil, &fault.InputError{File: req.Targets, Msg: fmt.Sprintf("%d instances, the models have %d", len(targets), len(models[0]))}
		}
	}
	var all []*mat.Dense
	for _, m := range models {
		all = append(all, m...)
	}
	k, err := job.ResolveKernel(req.Kernel, bw, all, req.Models[0])
	if err != nil {
		return nil, err
	}
	mean, per, err := kscore.DecomposeConditional(kscore.WithProgress(ctx, env.ReportProgress), k, models, targets)
	if err != nil {
		return nil, err
	}
	if warning != "" {
		env.Warning(warning)
	}
	out := newDecomposeResult(mean)
	out.Kernel = k.String()
	if conditional {
		out.Instances = len(per)
		if req.PerInstance {
			for _, d := range per {
				out.PerInstance = append(out.PerInstance, newDecomposeResult(d))
			}
		}
	}
	if w := negativeTermsNote(out); w != "" {
		out.Warnings = append(out.Warnings, w)
	}
	return out, nil
}

// negativeTermsNote explains negative estimates of the terms that are
// squared norms, so 0 or more in truth: bias ‖E[P] − Q‖², variance and
// MMD². Their estimators are unbiased (Gruber & Buettner, Section 4):
// averages over pairs of distinct samples, without the diagonal terms
// that would make them nonnegative and biased upwards. When the true
// value is near 0 the estimate lands below 0 about as often as above.
// The paper's estimators are not clipped and neither are these: clipping
// at 0 would bias every average taken over them (across instances,
// epochs or runs) upwards.
func negativeTermsNote(d *DecomposeResult) string {
	var neg []string
	for _, t := range []struct {
		name string
		v    jsonnum.Num
	}{{"bias", d.Bias}, {"variance", d.Variance}, {"mmd2", d.MMD2}} {
		if float64(t.v) < 0 {
			neg = append(neg, fmt.Sprintf("%s %.3g", t.name, float64(t.v)))
		}
	}
	instances := 0
	for _, p := range d.PerInstance {
		if p.Bias < 0 || p.Variance < 0 || p.MMD2 < 0 {
			instances++
		}
	}
	if len(neg) == 0 && instances == 0 {
		return ""
	}
	msg := "negative "
	if len(neg) > 0 {
		msg += strings.Join(neg, ", ") + ": "
	} else {
		msg = fmt.Sprintf("%d of %d instances have a negative bias, variance or mmd2: ", instances, len(d.PerInstance))
	}
	return msg + "each estimates a squared norm (bias ||E[P] - Q||², 0 or more) without bias, from pairs of distinct samples, so when its true value is near 0 the estimate is below 0 about as often as above; read it as 0 within sampling error (more models and samples shrink it). It is kept unclipped: the paper's estimators are unbiased, and clipping at 0 would bias it, and every average of it, upwards"
}

// checkModel checks the i-th of several model files against the first:
// (m, d) or (I, m, d) samples of the same rank, dimension and number of
// instances, with at least 2 samples.
func checkModel(files []string, arrays []*dataio.Array, i int) error {
	a, first := arrays[i], arrays[0]
	switch {
	case a.Rank() != 2 && a.Rank() != 3:
		return &fault.InputError{File: files[i], Msg: fmt.Sprintf("want (m, d) or (I, m, d) samples, got shape %v", a.Shape)}
	case a.Rank() != first.Rank():
		return &fault.InputError{File: files[i], Msg: fmt.Sprintf("has rank %d but %s has rank %d", a.Rank(), files[0], first.Rank())}
	}
	if err := dataio.CheckSameDim(files[0], first, files[i], a); err != nil {
		return err
	}
	if a.Rank() == 3 && a.Shape[0] != first.Shape[0] {
		return &fault.InputError{File: files[i], Msg: fmt.Sprintf("%d instances, %s has %d (conditional models need the same input instances, in the same order)", a.Shape[0], files[0], first.Shape[0])}
	}
	return needSamples(files[i], a.Shape[a.Rank()-2], "per model")
}

// needSamples rejects a file with fewer than 2 samples (per instance): the
// kernel terms average over pairs of distinct samples.
func needSamples(file string, m int, what string) error {
	if m < 2 {
		return &fault.InputError{File: file, Msg: fmt.Sprintf("%d sample(s) %s; need at least 2 (the kernel terms average over pairs of distinct samples)", m, what)}
	}
	return nil
}

// sampleCountWarning is a one-line warning when model files hold different
// numbers of samples (per instance), or "". The estimates stay unbiased
// (each model's terms use all its samples), but samples_per_model reports
// only the smallest count.
func sampleCountWarning(files []string, arrays []*dataio.Array) string {
	counts := make([]int, len(arrays))
	lo, differ := 0, false
	for i, a := range arrays {
		counts[i] = a.Shape[a.Rank()-2]
		if i == 0 || counts[i] < lo {
			lo = counts[i]
		}
		differ = differ || counts[i] != counts[0]
	}
	if !differ {
		return ""
	}
	const show = 10
	var parts []string
	for i, c := range counts {
		if i == show {
			parts = append(parts, fmt.Sprintf("... %d more", len(counts)-show))
			break
		}
		parts = append(parts, fmt.Sprintf("%s %d", files[i], c))
	}
	return fmt.Sprintf("the models have different sample counts (%s); each model's terms use all its samples, samples_per_model reports the smallest (%d)", strings.Join(parts, ", "), lo)
}
