package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/genlens/genlens/job/llmjob"
)

func newDecomposeCmd() *cobra.Command {
	f := llmjob.NewDecomposeRequest()
	var kf kernelFlags
	cmd := &cobra.Command{
		Use:   "decompose --models M1.npy [M2.npy ...] [--targets Y.npy] [flags]",
		Short: "Bias / variance / noise decomposition of the kernel score of an ensemble",
		Args:  args(cobra.ArbitraryArgs),
		RunE: func(cmd *cobra.Command, extra []string) error {
			f.Models = append(f.Models, extra...)
			f.Kernel, f.Gamma = kf.request(cmd)
			return runDecompose(cmd, f)
		},
	}
	kf.register(cmd, f.Kernel, "median")
	bindFlags(cmd, &f)
	return cmd
}

func runDecompose(cmd *cobra.Command, f llmjob.DecomposeRequest) error {
	res, err := runJob(cmd, llmjob.Decompose, f, "decompose")
	if err != nil {
		return err
	}
	res.Warnings = res.Warnings.Render(flagOf(cmd))
	return emit(cmd, "", nil, res, func(w io.Writer) { jobOf(cmd).Text(w, &f, res) })
}
