package main

import (
	"github.com/spf13/cobra"

	"github.com/genlens/genlens/job/imagejob"
)

func newSelectCmd() *cobra.Command {
	f := imagejob.NewSelectRequest()
	var out string
	cmd := &cobra.Command{
		Use:   "select --score fid|is --pools G1.npy|DIR G2.npy|DIR ... [--ref R.npy|STATS.npz|DIR] [flags]",
		Short: "Online selection of the best generator (FID-UCB, IS-UCB) simulated on sample pools",
		Args:  args(cobra.ArbitraryArgs),
		RunE: func(cmd *cobra.Command, extra []string) error {
			f.Pools = append(f.Pools, extra...)
			return runSelect(cmd, f, out)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&out, "out", "", "directory for steps.csv, regret.png, optimal_pick_ratio.png, select.json")
	fl.IntVar(&f.ImageOptions.Batch, "image-batch", f.ImageOptions.Batch, fieldHelp(cmd, &f.ImageOptions, "Batch")) // --batch: rows per step
	bindFlags(cmd, &f)
	return cmd
}

// selectOutputs are the files 'select --out' writes.
var selectOutputs = []string{"steps.csv", "regret.png", "optimal_pick_ratio.png", "select.json"}

func runSelect(cmd *cobra.Command, f imagejob.SelectRequest, out string) error {
	labels := []string{"trials"}
	if anyFolder(append([]string{f.Ref}, f.Pools...)...) {
		labels = []string{"images", "trials"}
	}
	return runEmit(cmd, &f, out, selectOutputs, labels)
}
