package main

import (
	"github.com/spf13/cobra"

	"github.com/genlens/genlens/disentangle"
	"github.com/genlens/genlens/job/reprjob"
)

func newDisentangleCmd() *cobra.Command {
	f := reprjob.NewDisentangleRequest()
	var out string
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "disentangle --train TRAIN --test TEST --generated G1 [G2 ...] [flags]",
		Short:   "Which image region does a generator get wrong? (pixel-cluster CMS, Gruber et al.)",
		Long:    helpText("disentangle"),
		Example: helpExamples("disentangle"),
		Args:    args(cobra.ArbitraryArgs),
		RunE: func(cmd *cobra.Command, extra []string) error {
			f.Generated = append(f.Generated, extra...)
			return runEmit(cmd, &f, out, asJSON, disentangleOutputs, []string{"pixel CKA"})
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.Train, "train", "", "training images (file or PNG folder)")
	fl.StringVar(&f.Test, "test", "", "held-out real images")
	fl.StringSliceVar(&f.Generated, "generated", nil, "generated image sets, e.g. one per epoch; more may follow as arguments")
	fl.StringSliceVar(&f.Names, "names", nil, "names of the generated sets (default: file names)")
	fl.StringVar(&f.TrainKey, "train-key", "", "array in a --train .npz")
	fl.StringVar(&f.TestKey, "test-key", "", "array in a --test .npz")
	fl.StringVar(&f.GeneratedKey, "generated-key", "", "array in the --generated .npz files")
	fl.StringVar(&f.Shape, "shape", "", "image shape HxW or HxWxC, for flattened (N, D) inputs")
	fl.StringVar(&f.PixelRange, "pixel-range", "auto", "source pixel range mapped to [-1, 1]: auto or LO,HI")
	fl.IntVar(&f.Clusters, "clusters", disentangle.DefaultClusters, "number of pixel clusters")
	fl.Float64Var(&f.Threshold, "cut-distance", 0, "cut the cluster tree at this distance instead of into --clusters clusters")
	renamedFlag(cmd, "threshold", "cut-distance")
	fl.StringVar(&f.Linkage, "linkage", "average", "average, complete, single or ward")
	fl.StringVar(&f.Distance, "distance", "rows", "rows (Euclidean between CKA rows, as the authors) or one-minus-cka")
	fl.IntVar(&f.CKABatch, "cka-batch", disentangle.DefaultCKABatch, "images per CKA mini-batch")
	fl.IntVar(&f.CKAImages, "cka-images", disentangle.DefaultCKAImages, "training images used for CKA")
	fl.BoolVar(&f.Shuffle, "shuffle", false, "draw the CKA images at random (seeded) instead of the first ones")
	fl.IntVar(&f.CMSBatch, "cms-batch", disentangle.DefaultCMSBatch, "images per CMS/MMD mini-batch")
	fl.StringVar(&f.Gamma, "gamma", "median", "RBF gamma: median or a positive number")
	fl.Uint64Var(&f.Seed, "seed", 1, "random seed (--shuffle)")
	fl.StringVar(&out, "out", "", "directory for the matrices, charts, CSV and JSON")
	fl.BoolVar(&asJSON, "json", false, "print one JSON document")
	sepFlag(cmd, &f.Sep)
	return cmd
}

// disentangleOutputs are the files 'disentangle --out' writes.
var disentangleOutputs = []string{"cka_matrix.npy", "labels.npy", "cluster_map.png", "cka_heatmap.png", "cms.png", "cms.csv", "disentangle.json"}
