package main

import (
	"github.com/genlens/genlens/job/reprjob"

	"github.com/spf13/cobra"
)

func newCKACmd() *cobra.Command {
	f := reprjob.NewCKARequest()
	cmd := &cobra.Command{
		Use:   "cka X.npy Y.npy | --x X.npy --y Y.npy [--kernel linear|rbf] [--threshold 0.5] [--debiased] [--json]",
		Short: "Centred kernel alignment between two representations of the same examples",
		Args:  args(cobra.MaximumNArgs(2)),
		RunE: func(cmd *cobra.Command, a []string) error {
			if err := positional(cmd, a, "x", "y"); err != nil {
				return err
			}
			return runEmit(cmd, &f, "", nil, nil)
		},
	}
	bindFlags(cmd, &f)
	return cmd
}
