package main

import (
	"fmt"
	"genlens/job/llmjob"
	"io"
	"path/filepath"
	"text/tabwriter"

	"github.com/spf13/cobra"
)

// correlateOutputs are the files 'correlate --out' writes.
var correlateOutputs = []string{"correlation.png", "covariance.csv", "correlation.csv", "correlate.json"}

func newCorrelateCmd() *cobra.Command {
	f := llmjob.NewCorrelateRequest()
	var kf kernelFlags
	var out string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "correlate E1.npy E2.npy ... [flags]",
		Short: "Distributional covariance and correlation between collections (e.g. training epochs)",
		Long: `correlate takes E files, each (n, m, d): n members (seeds) x m samples x d,
with the members in the same order in every file (e.g. one file per training
epoch), and estimates the distributional variance of each file (Eq. 9), the
covariance between files with members paired by index (Eq. 10), and the
correlation (Eq. 11), as in Figure 3 of Gruber & Buettner (ICML 2024).

Every file needs at least 2 members and at least 2 samples per member.
--key picks the array inside .npz inputs (the same name in every file).

variance[i] and covariance[i][i] differ by design; this is not a bug.
variance[i] is the unbiased variance estimator of Eq. 9: within-member pairs
of distinct samples minus pairs across members (it can be negative).
covariance[i][i] is the covariance estimator of Eq. 10 applied to file i with
itself, which the paper's correlation (Eq. 11) uses for its self-terms: its
paired term averages over all m² sample pairs of a member, the m diagonal
pairs k(x, x) included, so it exceeds variance[i] by the mean over members
of (mean k(x, x) - mean k(x, x'))/m, x' another sample of the same member:
a gap that matters for small m and vanishes as m grows. correlation[i][j] is
covariance[i][j] / sqrt(covariance[i][i] covariance[j][j]), so
correlation[i][i] is 1 (null when covariance[i][i] is not positive).

ensemble_gain[i] is the predicted kernel-score reduction of averaging the n
members of file i, (n-1)/n Var_i, for independently trained members.`,
		Example: `  genlens correlate epoch*.npy --kernel rbf --gamma dim --out run1/`,
		Args:    args(cobra.ArbitraryArgs),
		RunE: func(cmd *cobra.Command, files []string) error {
			f.Files = files
			f.Kernel, f.Gamma = kf.request(cmd)
			return runCorrelate(cmd, f, out, asJSON)
		},
	}
	kf.register(cmd, f.Kernel, "median")
	cmd.Flags().StringVar(&f.Key, "key", "", "array name inside the .npz inputs (applies to every input file)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON document")
	cmd.Flags().StringVar(&out, "out", "", "directory for correlation.png, covariance.csv, correlation.csv, correlate.json")
	sepFlag(cmd, &f.Sep)
	return cmd
}

func runCorrelate(cmd *cobra.Command, f llmjob.CorrelateRequest, out string, asJSON bool) error {
	if err := checkRun(&f, out, correlateOutputs, f.Files...); err != nil {
		return err
	}
	res, err := runJob(cmd, llmjob.Correlate, f, "correlate")
	if err != nil {
		return err
	}
	return emit(cmd, out, res.Artifacts(), asJSON, res, func(w io.Writer) { printCorrelation(w, res) })
}

func printCorrelation(w io.Writer, c *llmjob.CorrelateResult) {
	fmt.Fprintf(w, "%d files x %d members, kernel %s\n\n", len(c.Files), c.Members, c.Kernel)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "file\tvariance\tensemble gain\t")
	for e := range c.Files {
		fmt.Fprintf(tw, "corr %d\t", e)
	}
	fmt.Fprintln(tw)
	for e, p := range c.Files {
		fmt.Fprintf(tw, "%s\t%s\t%s\t", filepath.Base(p), fmtNum(float64(c.Variance[e])), fmtNum(float64(c.EnsembleGain[e])))
		for _, v := range c.Correlation[e] {
			fmt.Fprintf(tw, "%.3f\t", float64(v))
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
}
