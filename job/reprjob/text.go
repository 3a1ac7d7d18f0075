package reprjob

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/genlens/genlens/job"
)

var num = job.FormatNum

func ckaText(w io.Writer, f *CKARequest, res *CKAResult) {
	what := "CKA"
	if f.Debiased {
		what = "debiased CKA"
	}
	k := "linear kernel"
	if f.Kernel == "rbf" {
		k = fmt.Sprintf("rbf kernel, threshold %g", f.Threshold)
	}
	fmt.Fprintf(w, "%s (%s, %d examples): %s\n", what, k, res.N, num(float64(res.CKA)))
}

func disentangleText(w io.Writer, _ *DisentangleRequest, out *DisentangleResult) {
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
		fmt.Fprintf(w, "  cluster %d: %5d pixels, CKA within %s, to others <= %s\n", c, n, num(res.Within[c]), num(res.MaxBetween(c)))
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
		fmt.Fprintf(tw, "%s\t%.4f\t%.4f\t%s\t", s.Name, float64(s.CMSImage), float64(s.CMSProduct), num(float64(s.MMD2)))
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
