package main

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/job/llmjob"
)

func newDecomposeCmd() *cobra.Command {
	f := llmjob.NewDecomposeRequest()
	var kf kernelFlags
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "decompose --models M1.npy [M2.npy ...] [--targets Y.npy] [flags]",
		Short:   "Bias / variance / noise decomposition of the kernel score of an ensemble",
		Long:    helpText("decompose"),
		Example: helpExamples("decompose"),
		Args:    args(cobra.ArbitraryArgs),
		RunE: func(cmd *cobra.Command, extra []string) error {
			f.Models = append(f.Models, extra...)
			f.Kernel, f.Gamma = kf.request(cmd)
			return runDecompose(cmd, f, asJSON)
		},
	}
	cmd.Flags().StringSliceVar(&f.Models, "models", nil, "model sample files (.npy/.npz/.csv); more may follow as arguments")
	cmd.Flags().StringVar(&f.Targets, "targets", "", "target observations (.npy/.npz/.csv)")
	cmd.Flags().StringVar(&f.Key, "key", "", "array name inside the .npz inputs (applies to every input file)")
	kf.register(cmd, f.Kernel, "median")
	cmd.Flags().BoolVar(&f.PerInstance, "per-instance", false, "also report the terms of every instance (conditional input)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON document")
	sepFlag(cmd, &f.Sep)
	return cmd
}

func runDecompose(cmd *cobra.Command, f llmjob.DecomposeRequest, asJSON bool) error {
	res, err := runJob(cmd, llmjob.Decompose, f, "decompose")
	if err != nil {
		return err
	}
	res.Warnings = res.Warnings.Render(flagOf(cmd))
	return emit(cmd, "", nil, asJSON, res, func(w io.Writer) { printDecomposition(w, res) })
}

func printDecomposition(w io.Writer, d *llmjob.DecomposeResult) {
	fmt.Fprintf(w, "%d models x %d samples", d.NModels, d.SamplesPerModel)
	if d.Instances > 0 {
		fmt.Fprintf(w, " x %d instances (terms averaged over instances)", d.Instances)
	}
	fmt.Fprintf(w, ", kernel %s\n\n", d.Kernel)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, r := range []struct {
		name string
		v    job.Num
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
	for _, m := range d.Warnings {
		fmt.Fprintf(w, "note: %s\n", m)
	}
}
