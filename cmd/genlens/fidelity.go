package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/genlens/genlens/frechet"
	"github.com/genlens/genlens/internal/atomicfile"
	"github.com/genlens/genlens/job/imagejob"
)

func newStatsCmd() *cobra.Command {
	f := imagejob.NewStatsRequest()
	var out string
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "stats [FEATS.npy|DIR] --out STATS.npz",
		Short:   "Gaussian statistics (mu, sigma) of a feature set or a folder of images, as pytorch-fid writes them",
		Long:    helpText("stats"),
		Example: helpExamples("stats"),
		Args:    args(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			if err := positional(cmd, a, "in"); err != nil {
				return err
			}
			if f.In == "" || out == "" {
				return badUsage("stats: the input (FEATS|DIR, or --in) and --out STATS.npz are required (see 'genlens stats --help')")
			}
			var err error
			if f.Shard, out, err = resolveShard(cmd, "stats", f.Shards, f.Shard, out); err != nil {
				return err
			}
			if !strings.HasSuffix(strings.ToLower(out), ".npz") {
				return badUsage("stats: --out %s: want an .npz path", out)
			}
			if sameFileAs(out, f.In) != "" {
				return badUsage("stats: --out %s is the input; refusing to overwrite it", out)
			}
			// What the statistics are of: the bar's label, the summary's word.
			what := "rows"
			if anyFolder(f.In) {
				what = "images"
			}
			res, err := runJob(cmd, imagejob.Stats, f, what)
			if err != nil {
				return err
			}
			if err := atomicfile.Write(out, res.Artifact(filepath.Base(out)).Write); err != nil {
				return fmt.Errorf("writing %s: %w", out, err)
			}
			res.Path = out
			return emit(cmd, "", nil, asJSON, res, func(w io.Writer) {
				if res.Part != nil {
					fmt.Fprintf(w, "wrote %s: part %d of %d shards (0-based): n, mean (%d), scatter (%d x %d) of %d %s\n", out, res.Part.Shard, res.Part.Shards, res.Dim, res.Dim, res.Dim, res.N, what)
				} else {
					fmt.Fprintf(w, "wrote %s: mu (%d), sigma (%d x %d) from %d %s\n", out, res.Dim, res.Dim, res.Dim, res.N, what)
				}
				imagesLine(w, res.Images)
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON summary of the file written")
	cmd.Flags().StringVar(&f.In, "in", "", "feature rows (.npy/.npz/.csv, n x d) or a folder of images (or the argument)")
	cmd.Flags().StringVar(&f.Key, "key", "", "array name inside an .npz input")
	cmd.Flags().StringVar(&out, "out", "", "statistics file to write (.npz)")
	cmd.Flags().StringVar(&f.Dims, "dims", "", "folders: Inception feature, 64, 192, 768 or 2048 (default)")
	cmd.Flags().IntVar(&f.Shards, "shards", 0, "split into K shards and write this process's partial statistics (see 'genlens stats merge')")
	cmd.Flags().IntVar(&f.Shard, "shard", 0, "with --shards: this process's 0-based shard index (default $"+imagejob.EnvJobCompletionIndex+", else $"+imagejob.EnvSlurmArrayTaskID+" - $"+imagejob.EnvSlurmArrayTaskMin+")")
	imageFlags(cmd.Flags(), &f.ImageOptions, "batch")
	sepFlag(cmd, &f.Sep)
	return cmd
}

func newStatsMergeCmd() *cobra.Command {
	var f imagejob.StatsMergeRequest
	var out string
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "merge PARTS... --out STATS.npz [--allow-missing]",
		Short:   "Merge the part files of 'genlens stats --shards K' into one statistics file",
		Long:    helpText("stats-merge"),
		Example: helpExamples("stats-merge"),
		Args: func(cmd *cobra.Command, a []string) error {
			if len(a) == 0 {
				return badUsage("stats merge: name the part files to merge (genlens stats merge parts/part-*.npz --out stats.npz)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, a []string) error {
			if out == "" {
				return badUsage("stats merge: --out STATS.npz is required")
			}
			if !strings.HasSuffix(strings.ToLower(out), ".npz") {
				return badUsage("stats merge: --out %s: want an .npz path", out)
			}
			for _, p := range a {
				if strings.ContainsAny(p, "*?[") {
					if _, err := os.Stat(p); err != nil {
						m, err := filepath.Glob(p)
						if err != nil || len(m) == 0 {
							return badUsage("stats merge: %s: no file matches the pattern", p)
						}
						f.Parts = append(f.Parts, m...)
						continue
					}
				}
				f.Parts = append(f.Parts, p)
			}
			if in := sameFileAs(out, f.Parts...); in != "" {
				return badUsage("stats merge: --out %s is the part %s; refusing to overwrite it", out, in)
			}
			res, err := runJob(cmd, imagejob.StatsMerge, f, "parts")
			if err != nil {
				return err
			}
			if err := atomicfile.Write(out, res.Artifact(filepath.Base(out)).Write); err != nil {
				return fmt.Errorf("writing %s: %w", out, err)
			}
			return emit(cmd, "", nil, asJSON, res, func(w io.Writer) {
				fmt.Fprintf(w, "wrote %s: mu (%d), sigma (%d x %d) from %d rows in %d parts of %d shards", out, res.Dim, res.Dim, res.Dim, res.N, res.Parts, res.Shards)
				if len(res.Missing) > 0 {
					fmt.Fprintf(w, " (missing %s)", strings.Trim(fmt.Sprint(res.Missing), "[]"))
				}
				fmt.Fprintf(w, "; %s, mode %s, dims %s\n", res.Embedder, orDash(res.Mode), orDash(res.Dims))
			})
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "statistics file to write (.npz)")
	cmd.Flags().BoolVar(&f.AllowMissing, "allow-missing", false, "merge the parts present when some shards have none (the output says which)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON summary")
	return cmd
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func newCompareCmd() *cobra.Command {
	f := imagejob.NewCompareRequest()
	var kernelName, gamma string
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "compare REAL FAKE | --real DIR|R.(npy|npz) --fake DIR|F.(npy|npz) [flags]",
		Short:   "FID (and on request KID, MMD², CMS, PRDC, Vendi, CMMD) between real and generated images or feature sets",
		Long:    helpText("compare"),
		Example: helpExamples("compare"),
		Args:    args(cobra.MaximumNArgs(2)),
		RunE: func(cmd *cobra.Command, a []string) error {
			if err := positional(cmd, a, "real", "fake"); err != nil {
				return err
			}
			// Only when given, so that the job refuses them without mmd
			// or cms.
			ifGiven(cmd, "kernel", &f.Kernel, kernelName)
			ifGiven(cmd, "gamma", &f.Gamma, gamma)
			// A stage beyond those named is drawn without a label.
			stages := append(f.Stages(anyFolder(f.Real, f.Fake)), "")
			return runEmit(cmd, imagejob.Compare, f, "", asJSON, nil, stages, func(w io.Writer, res *imagejob.CompareResult) { printCompare(w, f, res) })
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.Real, "real", "", "real data: folder of images, feature rows (.npy/.npz/.csv) or statistics .npz (mu, sigma)")
	fl.StringVar(&f.Fake, "fake", "", "generated data: folder of images, feature rows (.npy/.npz/.csv) or statistics .npz (mu, sigma)")
	fl.StringVar(&f.RealKey, "real-key", "", "array of feature rows inside an .npz --real (rather than its mu, sigma)")
	fl.StringVar(&f.FakeKey, "fake-key", "", "array of feature rows inside an .npz --fake (rather than its mu, sigma)")
	fl.StringVar(&f.Metrics, "metrics", "", "comma-separated subset of fid,kid,mmd,cms,prdc,vendi,cmmd, or all (fid,kid,mmd,cms; default: fid)")
	fl.StringVar(&kernelName, "kernel", "rbf", "mmd, cms: kernel, rbf, laplacian, poly, cosine or linear")
	fl.StringVar(&gamma, "gamma", "median", "mmd, cms: bandwidth of rbf/laplacian/poly: dim (1/d), median, or a number")
	markGivenOnly(cmd, "kernel", "gamma")
	fl.IntVar(&f.KIDSubsets, "kid-subsets", f.KIDSubsets, "KID: number of subsets")
	fl.IntVar(&f.KIDSubsetSize, "kid-subset-size", f.KIDSubsetSize, "KID: subset size, at most the smaller side's rows (below them for a meaningful std)")
	fl.Uint64Var(&f.Seed, "seed", f.Seed, "random seed for the KID subsets and --prdc-max-rows")
	fl.IntVar(&f.NearestK, "nearest-k", f.NearestK, "prdc: neighbours k of the radii")
	fl.IntVar(&f.PRDCMaxRows, "prdc-max-rows", 0, "prdc: use at most this many rows of each side, drawn at random with --seed (0: all)")
	fl.StringVar(&f.Dims, "dims", "", "folders: Inception feature, 64, 192, 768 or 2048 (default)")
	imageFlags(fl, &f.ImageOptions, "batch")
	fl.BoolVar(&asJSON, "json", false, "print one JSON document")
	sepFlag(cmd, &f.Sep)
	return cmd
}

func printCompare(w io.Writer, f imagejob.CompareRequest, o *imagejob.CompareResult) {
	side := func(name, path string, n *int) string {
		switch {
		case n == nil:
			return name + " statistics (sample count not recorded)"
		case anyFolder(path):
			return fmt.Sprintf("%s %d images", name, *n)
		}
		return fmt.Sprintf("%s %d rows", name, *n)
	}
	fmt.Fprintf(w, "%s, %s, d = %d\n", side("real", f.Real, o.NReal), side("fake", f.Fake, o.NFake), o.Dim)
	defer imagesLine(w, o.Images)
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
	if o.Precision != nil {
		k := fmt.Sprintf("k = %d", f.NearestK)
		if f.PRDCMaxRows > 0 {
			k += fmt.Sprintf(", at most %d rows a side", f.PRDCMaxRows)
		}
		fmt.Fprintf(tw, "precision\t%s\t%s\n", fmtNum(float64(*o.Precision)), k)
		fmt.Fprintf(tw, "recall\t%s\t\n", fmtNum(float64(*o.Recall)))
		fmt.Fprintf(tw, "density\t%s\t\n", fmtNum(float64(*o.Density)))
		fmt.Fprintf(tw, "coverage\t%s\t\n", fmtNum(float64(*o.Coverage)))
	}
	if o.Vendi != nil {
		fmt.Fprintf(tw, "Vendi\t%s\tfake (real %s)\n", fmtNum(float64(*o.Vendi)), fmtNum(float64(*o.VendiReal)))
	}
	if o.CMMD != nil {
		fmt.Fprintf(tw, "CMMD\t%s\t\n", fmtNum(float64(*o.CMMD)))
	}
	tw.Flush()
}

func newISCmd() *cobra.Command {
	f := imagejob.NewISRequest()
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "is P.npy|DIR | --probs P.npy | --images DIR [--splits 10] [--json]",
		Short:   "Inception Score from class-probability rows or a folder of images",
		Long:    helpText("is"),
		Example: helpExamples("is"),
		Args:    args(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			which := "probs"
			if len(a) == 1 && anyFolder(a[0]) {
				which = "images"
			}
			if err := positional(cmd, a, which); err != nil {
				return err
			}
			return runEmit(cmd, imagejob.IS, f, "", asJSON, nil, []string{"images"}, func(w io.Writer, res *imagejob.ISResult) {
				fmt.Fprintf(w, "IS %s ± %s (%d splits)\n", fmtNum(float64(res.IS.Mean)), fmtNum(float64(res.IS.Std)), f.Splits)
				imagesLine(w, res.Images)
			})
		},
	}
	cmd.Flags().StringVar(&f.Probs, "probs", "", "class-probability rows (.npy/.npz/.csv), n x classes")
	cmd.Flags().StringVar(&f.Images, "images", "", "a folder of images instead of --probs")
	cmd.Flags().StringVar(&f.Key, "key", "", "array name inside an .npz input")
	cmd.Flags().IntVar(&f.Splits, "splits", f.Splits, "number of splits")
	cmd.Flags().BoolVar(&f.Shuffle, "shuffle", false, "permute the rows before splitting as torch-fidelity does (NumPy RandomState(2020))")
	cmd.Flags().Float64Var(&f.Tolerance, "tolerance", frechet.ProbTolerance, "how far a row may sum from 1; above the default, rows are rescaled to sum to 1")
	imageFlags(cmd.Flags(), &f.ImageOptions, "batch")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON document")
	sepFlag(cmd, &f.Sep)
	return cmd
}
