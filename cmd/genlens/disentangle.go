package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

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
			return runEmit(cmd, reprjob.Disentangle, f, out, asJSON, disentangleOutputs, []string{"pixel CKA"}, printDisentangle)
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

func printDisentangle(w io.Writer, out *reprjob.DisentangleResult) {
	res := out.Analysis
	g := res.Grid
	fmt.Fprintf(w, "images %v; %d training (%d for CKA), %d test; gamma %.6g\n", g, out.Inputs[0].Len, res.CKAImages, out.Inputs[1].Len, res.Gamma)
	for _, s := range out.Inputs {
		name := s.Path
		if s.Key != "" {
			name += " [" + s.Key + "]"
		}
		fmt.Fprintf(w, "  %s: %d images, pixel range %v\n", name, s.Len, s.Range)
	}
	if res.ConstantPixels > 0 {
		fmt.Fprintf(w, "%d pixels never vary in the CKA batches (CKA 0 with every pixel; they cluster together)\n", res.ConstantPixels)
	}
	fmt.Fprintf(w, "\n%d clusters (mean CKA within / largest mean CKA to another cluster):\n", len(res.Sizes))
	for c, n := range res.Sizes {
		fmt.Fprintf(w, "  cluster %d: %5d pixels, CKA within %s, to others <= %s\n", c, n, fmtNum(res.Within[c]), fmtNum(res.MaxBetween(c)))
	}
	if g.W <= 64 {
		fmt.Fprintln(w, "\ncluster map:")
		for _, row := range out.Labels {
			var b strings.Builder
			for _, c := range row {
				b.WriteByte("0123456789abcdefghijklmnopqrstuvwxyz"[c%36])
			}
			fmt.Fprintln(w, "  "+b.String())
		}
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "set\tCMS image\tproduct\tMMD²\t")
	for c := range res.Sizes {
		fmt.Fprintf(tw, "cluster %d\t", c)
	}
	fmt.Fprintln(tw, "main cluster\t")
	for i, s := range out.Sets {
		fmt.Fprintf(tw, "%s\t%.4f\t%.4f\t%s\t", s.Name, float64(s.CMSImage), float64(s.CMSProduct), fmtNum(float64(s.MMD2)))
		for _, v := range s.CMSClusters {
			fmt.Fprintf(tw, "%.4f\t", float64(v))
		}
		if c, share := res.Sets[i].MainCluster(); c >= 0 {
			fmt.Fprintf(tw, "%d (%.0f%%)\t", c, 100*share)
		} else {
			fmt.Fprint(tw, "-\t")
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	fmt.Fprintln(w, "\nmain cluster: the cluster with the largest share of -log CMS(product) = sum of -log CMS(cluster).")
}
