package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/genlens/genlens/job/llmjob"
)

func newDecomposeCmd() *cobra.Command {
	f := llmjob.NewDecomposeRequest()
	var kf kernelFlags
	cmd := &cobra.Command{
		Use:   "decompose --models M1.npy [M2.npy ...] [--targets Y.npy] [flags]",
		Short: "Bias / variance / noise decomposition of the kernel score of an ensemble",
		Args:  args(cobra.ArbitraryArgs),
		RunE: func(cmd *cobra.Command, extra []string) error {
			f.Models = append(f.Models, extra...)
			f.Kernel, f.Gamma = kf.request(cmd)
			return runDecompose(cmd, f)
		},
	}
	kf.register(cmd, f.Kernel, "median")
	bindFlags(cmd, &f)
	return cmd
}

func runDecompose(cmd *cobra.Command, f llmjob.DecomposeRequest) error {
	res, err := runJob(cmd, llmjob.Decompose, f, "decompose")
	if err != nil {
		return err
	}
	res.Warnings = res.Warnings.Render(flagOf(cmd))
	return emit(cmd, "", nil, res, func(w io.Writer) { jobOf(cmd).Text(w, &f, res) })
}

// correlateOutputs are the files 'correlate --out' writes.
var correlateOutputs = []string{"correlation.png", "covariance.csv", "correlation.csv", "correlate.json"}

func newCorrelateCmd() *cobra.Command {
	f := llmjob.NewCorrelateRequest()
	var kf kernelFlags
	var out string
	cmd := &cobra.Command{
		Use:   "correlate E1.npy E2.npy ... [flags]",
		Short: "Distributional covariance and correlation between collections (e.g. training epochs)",
		Args:  args(cobra.ArbitraryArgs),
		RunE: func(cmd *cobra.Command, files []string) error {
			f.Files = files
			f.Kernel, f.Gamma = kf.request(cmd)
			return runEmit(cmd, &f, out, correlateOutputs, []string{"correlate"})
		},
	}
	kf.register(cmd, f.Kernel, "median")
	cmd.Flags().StringVar(&out, "out", "", "directory for correlation.png, covariance.csv, correlation.csv, correlate.json")
	bindFlags(cmd, &f)
	return cmd
}

// kernelFlags binds --kernel and --gamma of the commands that score
// vectors with a kernel of kernel.Names.
type kernelFlags struct{ kernel, gamma string }

func (k *kernelFlags) register(cmd *cobra.Command, defaultKernel, defaultGamma string) {
	cmd.Flags().StringVar(&k.kernel, "kernel", defaultKernel, "kernel: rbf, laplacian, poly, cosine or linear")
	cmd.Flags().StringVar(&k.gamma, "gamma", defaultGamma, "bandwidth of rbf/laplacian/poly: dim (1/d), median, or a number")
	markGivenOnly(cmd, "gamma")
}

// request returns the kernel and gamma fields of a job request: gamma only
// when given, so that the job refuses it for a kernel without a bandwidth
// (cosine, linear) instead of silently ignoring it.
func (k *kernelFlags) request(cmd *cobra.Command) (name, gamma string) {
	ifGiven(cmd, "gamma", &gamma, k.gamma)
	return k.kernel, gamma
}

// ifGiven sets *field to v when the flag name was given on cmd's command
// line: for flags that reach a request only when given, so that the job
// refuses one that does not apply instead of silently ignoring it.
func ifGiven[T any](cmd *cobra.Command, name string, field *T, v T) {
	if cmd.Flags().Changed(name) {
		*field = v
	}
}

// givenOnly annotates a flag that reaches the request only when given
// (see ifGiven): its default is the job's reading of the unset field.
const givenOnly = "genlens:given-only"

// markGivenOnly marks the flags names of cmd as givenOnly.
func markGivenOnly(cmd *cobra.Command, names ...string) {
	for _, n := range names {
		if err := cmd.Flags().SetAnnotation(n, givenOnly, []string{"true"}); err != nil {
			panic(err)
		}
	}
}
