package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"genlens/frechet"
	"genlens/internal/atomicfile"
	"genlens/job"
)

func init() {
	extraCommands = append(extraCommands, newStatsCmd, newCompareCmd, newISCmd)
}

func newStatsCmd() *cobra.Command {
	f := job.NewStatsRequest()
	var out string
	cmd := &cobra.Command{
		Use:   "stats --in FEATS.npy --out STATS.npz",
		Short: "Gaussian statistics (mu, sigma) of a feature set, as pytorch-fid writes them",
		Long: `stats computes the mean and the (n-1)-normalised covariance of feature rows
(Inception, CLIP, DINOv2, ... embeddings; n x d) and writes them as an .npz
with arrays mu (d) and sigma (d x d), the format of pytorch-fid's
--save-stats, for later 'genlens compare --real STATS.npz'.`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.In == "" || out == "" {
				return badUsage("stats: --in FEATS and --out STATS.npz are required")
			}
			if !strings.HasSuffix(strings.ToLower(out), ".npz") {
				return badUsage("stats: --out %s: want an .npz path", out)
			}
			if sameFileAs(out, f.In) != "" {
				return badUsage("stats: --out %s is the input; refusing to overwrite it", out)
			}
			res, err := job.Stats(cmd.Context(), job.CLIEnv(nil, nil), f)
			if err != nil {
				return err
			}
			if err := atomicfile.Write(out, res.Artifact(filepath.Base(out)).Write); err != nil {
				return fmt.Errorf("writing %s: %w", out, err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s: mu (%d), sigma (%d x %d) from %d rows\n", out, res.Dim, res.Dim, res.Dim, res.N)
			return nil
		},
	}
	cmd.Flags().StringVar(&f.In, "in", "", "feature rows (.npy/.npz/.csv), n x d")
	cmd.Flags().StringVar(&f.Key, "key", "", "array name inside an .npz input")
	cmd.Flags().StringVar(&out, "out", "", "statistics file to write (.npz)")
	return cmd
}

func newCompareCmd() *cobra.Command {
	f := job.NewCompareRequest()
	var kernelName, gamma string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "compare --real R.(npy|npz) --fake F.(npy|npz) [flags]",
		Short: "FID, KID, MMD² and CMS between real and generated feature sets",
		Long: `compare computes two-sample metrics between feature rows of real data and of a
generator (any embedder: Inception gives FID, DINOv2 FD-DINOv2, VGGish FAD, I3D FVD):

  fid   Frechet distance with (n-1) covariances, as pytorch-fid / clean-fid
  kid   unbiased MMD² with (x.y/d + 1)^3 over --kid-subsets subsets of size
        min(--kid-subset-size, n), mean and std (torch-fidelity's convention)
  mmd   unbiased MMD² with --kernel/--gamma
  cms   cosine similarity of the mean embeddings with --kernel/--gamma

--real and --fake may each be a statistics file (.npz with mu and sigma, from
'genlens stats' or pytorch-fid), as 'python -m pytorch_fid A B' accepts; then
only fid can be computed. An .npz of several arrays without mu and sigma needs
--real-key (--fake-key) to name the array of rows; a key also reads rows from
an .npz that does hold mu and sigma.`,
		Example: `  genlens compare --real real_feats.npy --fake gen_feats.npy --json
  genlens compare --real cifar10_stats.npz --fake gen_feats.npy --metrics fid`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cmd.Flags().Changed("kernel") {
				f.Kernel = kernelName
			}
			if cmd.Flags().Changed("gamma") {
				f.Gamma = gamma
			}
			res, err := job.Compare(cmd.Context(), job.CLIEnv(nil, nil), f)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), res)
			}
			printCompare(cmd.OutOrStdout(), res)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.Real, "real", "", "real feature rows (.npy/.npz/.csv) or a statistics .npz (mu, sigma)")
	fl.StringVar(&f.Fake, "fake", "", "generated feature rows (.npy/.npz/.csv) or a statistics .npz (mu, sigma)")
	fl.StringVar(&f.RealKey, "real-key", "", "array of feature rows inside an .npz --real (rather than its mu, sigma)")
	fl.StringVar(&f.FakeKey, "fake-key", "", "array of feature rows inside an .npz --fake (rather than its mu, sigma)")
	fl.StringVar(&f.Metrics, "metrics", "", "comma-separated subset of fid,kid,mmd,cms (default: all that the inputs allow)")
	fl.StringVar(&kernelName, "kernel", "rbf", "kernel: rbf, laplacian, poly, cosine or linear")
	fl.StringVar(&gamma, "gamma", "median", "bandwidth of rbf/laplacian/poly: dim (1/d), median, or a number")
	fl.IntVar(&f.KIDSubsets, "kid-subsets", f.KIDSubsets, "KID: number of subsets")
	fl.IntVar(&f.KIDSubsetSize, "kid-subset-size", f.KIDSubsetSize, "KID: subset size (capped at the smaller sample)")
	fl.Uint64Var(&f.Seed, "seed", f.Seed, "random seed for the KID subsets")
	fl.BoolVar(&asJSON, "json", false, "print one JSON document")
	return cmd
}

func printCompare(w io.Writer, o *job.CompareResult) {
	side := func(name string, n *int) string {
		if n == nil {
			return name + " statistics (sample count not recorded)"
		}
		return fmt.Sprintf("%s %d rows", name, *n)
	}
	fmt.Fprintf(w, "%s, %s, d = %d\n", side("real", o.NReal), side("fake", o.NFake), o.Dim)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if o.FID != nil {
		fmt.Fprintf(tw, "FID\t%s\t\n", fmtNum(float64(*o.FID)))
	}
	if o.KID != nil {
		fmt.Fprintf(tw, "KID\t%s ± %s\t\n", fmtNum(float64(o.KID.Mean)), fmtNum(float64(o.KID.Std)))
	}
	if o.MMD2 != nil {
		fmt.Fprintf(tw, "MMD²\t%s\t%s\n", fmtNum(float64(*o.MMD2)), o.Kernel)
	}
	if o.CMS != nil {
		fmt.Fprintf(tw, "CMS\t%s\t%s\n", fmtNum(float64(*o.CMS)), o.Kernel)
	}
	tw.Flush()
}

func newISCmd() *cobra.Command {
	f := job.NewISRequest()
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "is --probs P.npy [--splits 10] [--json]",
		Short: "Inception Score from class-probability rows",
		Long: `is computes the Inception Score exp(E KL(p(y|x) || p(y))) from class-probability
rows (n x classes, e.g. Inception's softmax outputs): --splits consecutive
splits, mean and (population) std over splits, as the original code and
torch-fidelity. Every row must be a distribution (non-negative, summing to 1
within --tolerance, default 1e-6). Softmax outputs saved as float32 are often
1e-7 to 1e-5 off: a looser --tolerance accepts such rows and rescales each to
sum to exactly 1 first.`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			res, err := job.IS(cmd.Context(), job.CLIEnv(nil, nil), f)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), res)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "IS %s ± %s (%d splits)\n", fmtNum(float64(res.IS.Mean)), fmtNum(float64(res.IS.Std)), f.Splits)
			return nil
		},
	}
	cmd.Flags().StringVar(&f.Probs, "probs", "", "class-probability rows (.npy/.npz/.csv), n x classes")
	cmd.Flags().StringVar(&f.Key, "key", "", "array name inside an .npz input")
	cmd.Flags().IntVar(&f.Splits, "splits", f.Splits, "number of splits")
	cmd.Flags().Float64Var(&f.Tolerance, "tolerance", frechet.ProbTolerance, "how far a row may sum from 1; above the default, rows are rescaled to sum to 1")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON document")
	return cmd
}
