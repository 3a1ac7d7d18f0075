package main

import (
	"github.com/spf13/cobra"

	"github.com/genlens/genlens/job/reprjob"
)

func newDisentangleCmd() *cobra.Command {
	f := reprjob.NewDisentangleRequest()
	var out string
	cmd := &cobra.Command{
		Use:   "disentangle --train TRAIN --test TEST --generated G1 [G2 ...] [flags]",
		Short: "Which image region does a generator get wrong? (pixel-cluster CMS, Gruber et al.)",
		Args:  args(cobra.ArbitraryArgs),
		RunE: func(cmd *cobra.Command, extra []string) error {
			f.Generated = append(f.Generated, extra...)
			return runEmit(cmd, &f, out, disentangleOutputs, []string{"pixel CKA"})
		},
	}
	fl := cmd.Flags()
	fl.Float64Var(&f.Threshold, "cut-distance", 0, "cut the cluster tree at this distance instead of into --clusters clusters")
	renamedFlag(cmd, "threshold", "cut-distance")
	fl.StringVar(&out, "out", "", "directory for the matrices, charts, CSV and JSON")
	bindFlags(cmd, &f)
	return cmd
}

// disentangleOutputs are the files 'disentangle --out' writes.
var disentangleOutputs = []string{"cka_matrix.npy", "labels.npy", "cluster_map.png", "cka_heatmap.png", "cms.png", "cms.csv", "disentangle.json"}

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
