package main

import (
	"github.com/genlens/genlens/job/llmjob"

	"github.com/spf13/cobra"
)

// correlateOutputs are the files 'correlate --out' writes.
var correlateOutputs = []string{"correlation.png", "covariance.csv", "correlation.csv", "correlate.json"}

func newCorrelateCmd() *cobra.Command {
	f := llmjob.NewCorrelateRequest()
	var kf kernelFlags
	var out string
	cmd := &cobra.Command{
		Use:   "correlate E1.npy E2.npy ... [flags]",
		Short: "Distributional covariance and correlation between collections (e.g. training epochs)",
		Args:  args(cobra.ArbitraryArgs),
		RunE: func(cmd *cobra.Command, files []string) error {
			f.Files = files
			f.Kernel, f.Gamma = kf.request(cmd)
			return runEmit(cmd, &f, out, correlateOutputs, []string{"correlate"})
		},
	}
	kf.register(cmd, f.Kernel, "median")
	cmd.Flags().StringVar(&out, "out", "", "directory for correlation.png, covariance.csv, correlation.csv, correlate.json")
	bindFlags(cmd, &f)
	return cmd
}
