package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"gonum.org/v1/gonum/mat"

	"genlens/chart"
	"genlens/dataio"
	"genlens/kscore"
)

type correlateFlags struct {
	kf   kernelFlags
	key  string
	json bool
	out  string
}

func newCorrelateCmd() *cobra.Command {
	var f correlateFlags
	cmd := &cobra.Command{
		Use:   "correlate E1.npy E2.npy ... [flags]",
		Short: "Distributional covariance and correlation between collections (e.g. training epochs)",
		Long: `correlate takes E files, each (n, m, d): n members (seeds) x m samples x d,
with the members in the same order in every file (e.g. one file per training
epoch), and estimates the distributional variance of each file (Eq. 9), the
covariance between files with members paired by index (Eq. 10), and the
correlation (Eq. 11), as in seed 000's Figure 3.

Every file needs at least 2 members and at least 2 samples per member.
--key picks the array inside .npz inputs (the same name in every file).

variance[i] and covariance[i][i] differ by design; this is not a bug.
variance[i] is the unbiased variance estimator of Eq. 9: within-member pairs
of distinct samples minus pairs across members (it can be negative).
covariance[i][i] is the covariance estimator of Eq. 10 applied to file i with
itself, which seed 000's correlation (Eq. 11) uses for its self-terms: its
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
		RunE:    func(cmd *cobra.Command, files []string) error { return runCorrelate(cmd, files, f) },
	}
	f.kf.register(cmd, "rbf", "median")
	cmd.Flags().StringVar(&f.key, "key", "", "array name inside the .npz inputs (applies to every input file)")
	cmd.Flags().BoolVar(&f.json, "json", false, "print one JSON document")
	cmd.Flags().StringVar(&f.out, "out", "", "directory for correlation.png, covariance.csv, correlation.csv, correlate.json")
	return cmd
}

// correlation is the JSON contract of `genlens correlate`.
type correlation struct {
	Files        []string `json:"files"`
	Members      int      `json:"members"`
	Variance     []num    `json:"variance"`
	Covariance   [][]num  `json:"covariance"`
	Correlation  [][]num  `json:"correlation"`
	EnsembleGain []num    `json:"ensemble_gain"`
	Kernel       string   `json:"kernel"`
}

// correlateOutputs are the files 'correlate --out' writes.
var correlateOutputs = []string{"correlation.png", "covariance.csv", "correlation.csv", "correlate.json"}

func runCorrelate(cmd *cobra.Command, files []string, f correlateFlags) error {
	if len(files) < 2 {
		return badUsage("correlate: give at least two files, one (members, samples, d) array per collection (see 'genlens correlate --help')")
	}
	if err := f.kf.checkGamma(cmd); err != nil {
		return err
	}
	if err := guardOut(f.out, correlateOutputs, files...); err != nil {
		return err
	}
	var epochs [][]*mat.Dense
	var first *dataio.Array
	for i, p := range files {
		a, err := dataio.ReadArray(p, dataio.ReadOptions{Key: f.key})
		if err != nil {
			return err
		}
		if a.Rank() != 3 {
			return &dataio.InputError{File: p, Msg: fmt.Sprintf("want a 3-D array (members, samples, d), got shape %v", a.Shape)}
		}
		if a.Shape[0] < 2 {
			return &dataio.InputError{File: p, Msg: fmt.Sprintf("%d member(s); the covariance needs at least 2 members (seeds) per file", a.Shape[0])}
		}
		if a.Shape[1] < 2 {
			return &dataio.InputError{File: p, Msg: fmt.Sprintf("%d sample(s) per member; need at least 2 (the variance averages over pairs of distinct samples)", a.Shape[1])}
		}
		if i == 0 {
			first = a
		} else {
			if err := dataio.CheckSameDim(files[0], first, p, a); err != nil {
				return err
			}
			if a.Shape[0] != first.Shape[0] {
				return &dataio.InputError{File: p, Msg: fmt.Sprintf("%d members, %s has %d (members must be paired across files)", a.Shape[0], files[0], first.Shape[0])}
			}
		}
		epochs = append(epochs, instances(a))
	}
	var all []*mat.Dense
	for _, e := range epochs {
		all = append(all, e...)
	}
	k, err := f.kf.build(all)
	if err != nil {
		return err
	}
	cov, vars, err := kscore.CovarianceMatrix(k, epochs)
	if err != nil {
		return err
	}
	corr := kscore.CorrelationMatrix(cov)
	n := first.Shape[0]
	out := correlation{Files: files, Members: n, Variance: nums(vars), Kernel: k.String()}
	E := len(files)
	covRows, corrRows := make([][]float64, E), make([][]float64, E)
	for e := 0; e < E; e++ {
		covRows[e], corrRows[e] = make([]float64, E), make([]float64, E)
		for g := 0; g < E; g++ {
			covRows[e][g], corrRows[e][g] = cov.At(e, g), corr.At(e, g)
		}
		out.Covariance = append(out.Covariance, nums(covRows[e]))
		out.Correlation = append(out.Correlation, nums(corrRows[e]))
		out.EnsembleGain = append(out.EnsembleGain, num(kscore.EnsembleGain(vars[e], 0, n)))
	}
	if f.out != "" {
		if err := prepareOut(f.out); err != nil {
			return err
		}
		labels := make([]string, E)
		header := make([]string, E)
		for e, p := range files {
			labels[e] = strings.TrimSuffix(filepath.Base(p), filepath.Ext(p))
			header[e] = labels[e]
		}
		if err := chart.Heatmap(outPath(f.out, "correlation.png"), "Distributional correlation", corrRows, labels, -1, 1); err != nil {
			return err
		}
		if err := dataio.WriteCSV(outPath(f.out, "covariance.csv"), header, covRows); err != nil {
			return err
		}
		if err := dataio.WriteCSV(outPath(f.out, "correlation.csv"), header, corrRows); err != nil {
			return err
		}
		if err := dataio.WriteJSON(outPath(f.out, "correlate.json"), out); err != nil {
			return err
		}
	}
	if f.json {
		return writeJSON(cmd.OutOrStdout(), out)
	}
	printCorrelation(cmd.OutOrStdout(), &out, corrRows)
	return nil
}

func printCorrelation(w io.Writer, c *correlation, corr [][]float64) {
	fmt.Fprintf(w, "%d files x %d members, kernel %s\n\n", len(c.Files), c.Members, c.Kernel)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "file\tvariance\tensemble gain\t")
	for e := range c.Files {
		fmt.Fprintf(tw, "corr %d\t", e)
	}
	fmt.Fprintln(tw)
	for e, p := range c.Files {
		fmt.Fprintf(tw, "%s\t%s\t%s\t", filepath.Base(p), fmtNum(float64(c.Variance[e])), fmtNum(float64(c.EnsembleGain[e])))
		for _, v := range corr[e] {
			fmt.Fprintf(tw, "%.3f\t", v)
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
}
