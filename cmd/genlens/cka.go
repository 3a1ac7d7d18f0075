package main

import (
	"github.com/genlens/genlens/job/reprjob"

	"github.com/spf13/cobra"
)

func newCKACmd() *cobra.Command {
	f := reprjob.NewCKARequest()
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "cka X.npy Y.npy | --x X.npy --y Y.npy [--kernel linear|rbf] [--threshold 0.5] [--debiased] [--json]",
		Short:   "Centred kernel alignment between two representations of the same examples",
		Long:    helpText("cka"),
		Example: helpExamples("cka"),
		Args:    args(cobra.MaximumNArgs(2)),
		RunE: func(cmd *cobra.Command, a []string) error {
			if err := positional(cmd, a, "x", "y"); err != nil {
				return err
			}
			return runEmit(cmd, &f, "", asJSON, nil, nil)
		},
	}
	cmd.Flags().StringVar(&f.X, "x", "", "first representation (.npy/.npz/.csv), n x d1")
	cmd.Flags().StringVar(&f.Y, "y", "", "second representation, n x d2")
	cmd.Flags().StringVar(&f.Kernel, "kernel", f.Kernel, "linear or rbf")
	cmd.Flags().Float64Var(&f.Threshold, "threshold", f.Threshold, "rbf: sigma = threshold x sqrt(median squared distance)")
	cmd.Flags().BoolVar(&f.Debiased, "debiased", false, "use the unbiased HSIC estimator (needs n >= 4)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON document")
	sepFlag(cmd, &f.Sep)
	return cmd
}
