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

ensemble_gain[i] is the predicted kernel-score reduction of averaging the n
members of file i, (n-1)/n Var_i, for independently trained members.`,
		Example: `  genlens correlate epoch*.npy --kernel rbf --gamma dim --out run1/`,
		Args:    args(cobra.MinimumNArgs(1)),
		RunE:    func(cmd *cobra.Command, files []string) error { return runCorrelate(cmd, files, f) },
	}
	f.kf.register(cmd, "rbf", "median")
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
	if err := guardOut(f.out, correlateOutputs, files...); err != nil {
		return err
	}
	var epochs [][]*mat.Dense
	var first *dataio.Array
	for i, p := range files {
		a, err := dataio.ReadArray(p, dataio.ReadOptions{})
		if err != nil {
			return err
		}
		if a.Rank() != 3 {
			return &dataio.InputError{File: p, Msg: fmt.Sprintf("want a 3-D array (members, samples, d), got shape %v", a.Shape)}
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
