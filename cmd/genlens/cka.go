package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"genlens/job"
)

func newCKACmd() *cobra.Command {
	f := job.NewCKARequest()
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "cka X.npy Y.npy | --x X.npy --y Y.npy [--kernel linear|rbf] [--threshold 0.5] [--debiased] [--json]",
		Short: "Centred kernel alignment between two representations of the same examples",
		Long: `cka compares two representations of the same n examples (rows in the same
order; the numbers of columns may differ), e.g. two layers or two networks,
with centred kernel alignment as Kornblith et al. (2019) compute it: linear
kernel, or RBF exp(-d²/(2σ²)) with σ² = threshold² x the median squared
distance between the rows of each representation. CKA is HSIC(K, L) /
sqrt(HSIC(K, K) HSIC(L, L)) with the biased HSIC (Gruber et al., Eq. 11-13), or
with the unbiased HSIC of Song et al. (2012) under --debiased. The result is
null in JSON when undefined (a representation constant over the examples).
X and Y may be the two arguments ('genlens cka a.npy b.npy' is 'genlens cka
--x a.npy --y b.npy'; an argument and its flag with different values are
refused).`,
		Example: `  genlens cka layer3.npy layer4.npy
  genlens cka --x a.csv --y b.csv --kernel rbf --threshold 0.5 --json`,
		Args: args(cobra.MaximumNArgs(2)),
		RunE: func(cmd *cobra.Command, a []string) error {
			if err := positional(cmd, a, "x", "y"); err != nil {
				return err
			}
			return runCKA(cmd, f, asJSON)
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

func runCKA(cmd *cobra.Command, f job.CKARequest, asJSON bool) error {
	res, err := runJob(cmd, job.CKA, f)
	if err != nil {
		return err
	}
	return emit(cmd, "", nil, asJSON, res, func(w io.Writer) { printCKA(w, f, res) })
}

func printCKA(w io.Writer, f job.CKARequest, res *job.CKAResult) {
	what := "CKA"
	if f.Debiased {
		what = "debiased CKA"
	}
	k := "linear kernel"
	if f.Kernel == "rbf" {
		k = fmt.Sprintf("rbf kernel, threshold %g", f.Threshold)
	}
	fmt.Fprintf(w, "%s (%s, %d examples): %s\n", what, k, res.N, fmtNum(float64(res.CKA)))
}
