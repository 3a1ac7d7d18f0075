package main

import (
	"fmt"
	"io"
	"path/filepath"
	"text/tabwriter"

	"github.com/genlens/genlens/job/llmjob"

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
		Use:     "correlate E1.npy E2.npy ... [flags]",
		Short:   "Distributional covariance and correlation between collections (e.g. training epochs)",
		Long:    helpText("correlate"),
		Example: helpExamples("correlate"),
		Args:    args(cobra.ArbitraryArgs),
		RunE: func(cmd *cobra.Command, files []string) error {
			f.Files = files
			f.Kernel, f.Gamma = kf.request(cmd)
			return runEmit(cmd, llmjob.Correlate, f, out, asJSON, correlateOutputs, []string{"correlate"}, printCorrelation)
		},
	}
	kf.register(cmd, f.Kernel, "median")
	cmd.Flags().StringVar(&f.Key, "key", "", "array name inside the .npz inputs (applies to every input file)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON document")
	cmd.Flags().StringVar(&out, "out", "", "directory for correlation.png, covariance.csv, correlation.csv, correlate.json")
	sepFlag(cmd, &f.Sep)
	return cmd
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
