package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"gonum.org/v1/gonum/mat"

	"genlens/dataio"
	"genlens/kscore"
)

type decomposeFlags struct {
	models      []string
	targets     string
	key         string
	kf          kernelFlags
	perInstance bool
	json        bool
}

func newDecomposeCmd() *cobra.Command {
	var f decomposeFlags
	cmd := &cobra.Command{
		Use:   "decompose --models M1.npy [M2.npy ...] [--targets Y.npy] [flags]",
		Short: "Bias / variance / noise decomposition of the kernel score of an ensemble",
		Long: `decompose estimates, from samples alone, the terms of seed 000's Theorem 3.2:
expected kernel score = noise + bias + variance, with the kernel entropy of
each model and the MMD² to the targets.

Models: one file per model, each (m, d) samples or (I, m, d) for I input
instances (conditional: terms per instance, then averaged), or a single
stacked file (n, m, d) of n models, or (n, I, m, d). Targets: (l, d) or (I, l, d).
Every model and the targets need at least 2 samples (per instance); models
with different sample counts are allowed (each model's terms use all its
samples) and draw a warning. Variance and bias need at least 2 models; noise,
bias, kernel score and MMD² need --targets. --key picks the array inside
.npz inputs (the same name in every file).`,
		Example: `  genlens decompose --models ensemble.npy --targets real.npy --kernel rbf --gamma median
  genlens decompose --models m1.npy m2.npy m3.npy --json`,
		Args: args(cobra.ArbitraryArgs),
		RunE: func(cmd *cobra.Command, extra []string) error {
			f.models = append(f.models, extra...)
			return runDecompose(cmd, f)
		},
	}
	cmd.Flags().StringSliceVar(&f.models, "models", nil, "model sample files (.npy/.npz/.csv); more may follow as arguments")
	cmd.Flags().StringVar(&f.targets, "targets", "", "target observations (.npy/.npz/.csv)")
	cmd.Flags().StringVar(&f.key, "key", "", "array name inside the .npz inputs (applies to every input file)")
	f.kf.register(cmd, "rbf", "median")
	cmd.Flags().BoolVar(&f.perInstance, "per-instance", false, "also report the terms of every instance (conditional input)")
	cmd.Flags().BoolVar(&f.json, "json", false, "print one JSON document")
	return cmd
}

// decomposition is the JSON contract of `genlens decompose`.
type decomposition struct {
	NModels         int              `json:"n_models"`
	SamplesPerModel int              `json:"samples_per_model"`
	Instances       int              `json:"instances,omitempty"`
	Variance        num              `json:"variance"`
	KernelEntropy   num              `json:"kernel_entropy"`
	EnsembleGain    num              `json:"ensemble_gain"`
	Noise           num              `json:"noise"`
	Bias            num              `json:"bias"`
	KernelScore     num              `json:"kernel_score"`
	MMD2            num              `json:"mmd2"`
	IdentityGap     num              `json:"identity_gap"`
	Kernel          string           `json:"kernel,omitempty"`
	PerInstance     []*decomposition `json:"per_instance,omitempty"`
}

func toJSON(d kscore.Decomposition) *decomposition {
	out := &decomposition{
		NModels: d.Models, SamplesPerModel: d.Samples, Variance: num(d.Variance),
		KernelEntropy: num(d.KernelEntropy), EnsembleGain: num(d.EnsembleGain),
		Noise: num(d.Noise), Bias: num(d.Bias), KernelScore: num(d.KernelScore),
		MMD2: num(d.MMD2), IdentityGap: num(d.IdentityGap),
	}
	return out
}

func runDecompose(cmd *cobra.Command, f decomposeFlags) error {
	if len(f.models) == 0 {
		return badUsage("decompose: give at least one model file with --models")
	}
	if err := f.kf.checkGamma(cmd); err != nil {
		return err
	}
	opt := dataio.ReadOptions{Key: f.key}
	var arrays []*dataio.Array
	for _, p := range f.models {
		a, err := dataio.ReadArray(p, opt)
		if err != nil {
			return err
		}
		arrays = append(arrays, a)
	}
	// models[i][c]: samples of model i for instance c (one instance when
	// unconditional).
	var models [][]*mat.Dense
	conditional := false
	warning := "" // printed once the decomposition succeeded
	first := arrays[0]
	switch {
	case len(arrays) == 1 && (first.Rank() == 3 || first.Rank() == 4):
		conditional = first.Rank() == 4
		if err := needSamples(f.models[0], first.Shape[first.Rank()-2], "per model"); err != nil {
			return err
		}
		for i := 0; i < first.Shape[0]; i++ {
			models = append(models, instances(first.Slice(i)))
		}
	default:
		for i, a := range arrays {
			if a.Rank() != 2 && a.Rank() != 3 {
				return &dataio.InputError{File: f.models[i], Msg: fmt.Sprintf("want (m, d) or (I, m, d) samples, got shape %v", a.Shape)}
			}
			if a.Rank() != first.Rank() {
				return &dataio.InputError{File: f.models[i], Msg: fmt.Sprintf("has rank %d but %s has rank %d", a.Rank(), f.models[0], first.Rank())}
			}
			if err := dataio.CheckSameDim(f.models[0], first, f.models[i], a); err != nil {
				return err
			}
			if a.Rank() == 3 && a.Shape[0] != first.Shape[0] {
				return &dataio.InputError{File: f.models[i], Msg: fmt.Sprintf("%d instances, %s has %d (conditional models need the same input instances, in the same order)", a.Shape[0], f.models[0], first.Shape[0])}
			}
			if err := needSamples(f.models[i], a.Shape[a.Rank()-2], "per model"); err != nil {
				return err
			}
			models = append(models, instances(a))
		}
		conditional = first.Rank() == 3
		warning = sampleCountWarning(f.models, arrays)
	}
	var targets []*mat.Dense
	if f.targets != "" {
		y, err := dataio.ReadArray(f.targets, opt)
		if err != nil {
			return err
		}
		wantRank := 2
		if conditional {
			wantRank = 3
		}
		if y.Rank() != wantRank {
			return &dataio.InputError{File: f.targets, Msg: fmt.Sprintf("want a %d-D array of targets to match the models, got shape %v", wantRank, y.Shape)}
		}
		if err := dataio.CheckSameDim(f.models[0], first, f.targets, y); err != nil {
			return err
		}
		if err := needSamples(f.targets, y.Shape[y.Rank()-2], "of the targets"); err != nil {
			return err
		}
		targets = instances(y)
		if len(targets) != len(models[0]) {
			return &dataio.InputError{File: f.targets, Msg: fmt.Sprintf("%d instances, the models have %d", len(targets), len(models[0]))}
		}
	}
	var all []*mat.Dense
	for _, m := range models {
		all = append(all, m...)
	}
	k, err := f.kf.build(all)
	if err != nil {
		return err
	}
	mean, per, err := kscore.DecomposeConditional(k, models, targets)
	if err != nil {
		return err
	}
	if warning != "" {
		fmt.Fprintln(cmd.ErrOrStderr(), warning)
	}
	out := toJSON(mean)
	out.Kernel = k.String()
	if conditional {
		out.Instances = len(per)
		if f.perInstance {
			for _, d := range per {
				out.PerInstance = append(out.PerInstance, toJSON(d))
			}
		}
	}
	if f.json {
		return writeJSON(cmd.OutOrStdout(), out)
	}
	printDecomposition(cmd.OutOrStdout(), out)
	return nil
}

// needSamples rejects a file with fewer than 2 samples (per instance): the
// kernel terms average over pairs of distinct samples.
func needSamples(file string, m int, what string) error {
	if m < 2 {
		return &dataio.InputError{File: file, Msg: fmt.Sprintf("%d sample(s) %s; need at least 2 (the kernel terms average over pairs of distinct samples)", m, what)}
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
	return fmt.Sprintf("genlens: warning: the models have different sample counts (%s); each model's terms use all its samples, samples_per_model reports the smallest (%d)", strings.Join(parts, ", "), lo)
}

// instances splits a (m, d) array into one set or an (I, m, d) array into
// I sets.
func instances(a *dataio.Array) []*mat.Dense {
	if a.Rank() == 2 {
		return []*mat.Dense{mat.NewDense(a.Shape[0], a.Shape[1], a.Data)}
	}
	var out []*mat.Dense
	for c := 0; c < a.Shape[0]; c++ {
		s := a.Slice(c)
		out = append(out, mat.NewDense(s.Shape[0], s.Shape[1], s.Data))
	}
	return out
}

func printDecomposition(w io.Writer, d *decomposition) {
	fmt.Fprintf(w, "%d models x %d samples", d.NModels, d.SamplesPerModel)
	if d.Instances > 0 {
		fmt.Fprintf(w, " x %d instances (terms averaged over instances)", d.Instances)
	}
	fmt.Fprintf(w, ", kernel %s\n\n", d.Kernel)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, r := range []struct {
		name string
		v    num
		note string
	}{
		{"kernel score", d.KernelScore, "expected score of one model against the targets (lower is better)"},
		{"  noise", d.Noise, "-||Q||², irreducible"},
		{"  bias", d.Bias, "||E[P] - Q||²"},
		{"  variance", d.Variance, "distributional variance, Eq. 9"},
		{"identity gap", d.IdentityGap, "score - noise - bias - variance (rounding only)"},
		{"MMD²", d.MMD2, "mean over models, unbiased"},
		{"kernel entropy", d.KernelEntropy, "mean over models"},
		{"ensemble gain", d.EnsembleGain, fmt.Sprintf("predicted score reduction of averaging the %d models", d.NModels)},
	} {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.name, fmtNum(float64(r.v)), r.note)
	}
	tw.Flush()
}
