package main

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"gonum.org/v1/gonum/mat"

	"genlens/dataio"
	"genlens/kernel"
	"genlens/kscore"
)

type kernelFlags struct{ kernel, gamma string }

func (k *kernelFlags) register(cmd *cobra.Command, defaultKernel, defaultGamma string) {
	cmd.Flags().StringVar(&k.kernel, "kernel", defaultKernel, "kernel: rbf, laplacian, poly, cosine or linear")
	cmd.Flags().StringVar(&k.gamma, "gamma", defaultGamma, "bandwidth of rbf/laplacian/poly: dim (1/d), median, or a number")
}

// build resolves the kernel; the median rule looks at up to 2000 rows
// evenly spaced over the sets.
func (k *kernelFlags) build(sets []*mat.Dense) (kernel.Kernel, error) {
	bw, err := kernel.ParseBandwidth(k.gamma)
	if err != nil {
		return nil, usageError{err}
	}
	var sample *mat.Dense
	if len(sets) > 0 {
		sample = sampleRows(sets, 2000)
	}
	kr, err := kernel.New(k.kernel, bw, sample)
	if err != nil {
		if bw.Rule == kernel.Median && err == kernel.ErrZeroMedian {
			return nil, err
		}
		return nil, usageError{err}
	}
	return kr, nil
}

func sampleRows(sets []*mat.Dense, limit int) *mat.Dense {
	total := 0
	for _, s := range sets {
		r, _ := s.Dims()
		total += r
	}
	step := max(1, (total+limit-1)/limit)
	_, d := sets[0].Dims()
	var data []float64
	i := 0
	for _, s := range sets {
		r, _ := s.Dims()
		for j := 0; j < r; j++ {
			if i%step == 0 {
				data = append(data, s.RawRowView(j)...)
			}
			i++
		}
	}
	return mat.NewDense(len(data)/d, d, data)
}

type decomposeFlags struct {
	models      []string
	targets     string
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
Variance and bias need at least 2 models; noise, bias, kernel score and MMD²
need --targets.`,
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
	var arrays []*dataio.Array
	for _, p := range f.models {
		a, err := dataio.ReadArray(p, dataio.ReadOptions{})
		if err != nil {
			return err
		}
		arrays = append(arrays, a)
	}
	// models[i][c]: samples of model i for instance c (one instance when
	// unconditional).
	var models [][]*mat.Dense
	conditional := false
	first := arrays[0]
	switch {
	case len(arrays) == 1 && (first.Rank() == 3 || first.Rank() == 4):
		conditional = first.Rank() == 4
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
			models = append(models, instances(a))
		}
		conditional = first.Rank() == 3
	}
	var targets []*mat.Dense
	if f.targets != "" {
		y, err := dataio.ReadArray(f.targets, dataio.ReadOptions{})
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
