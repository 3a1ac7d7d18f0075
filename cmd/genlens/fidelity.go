package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/genlens/genlens/internal/atomicfile"
	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/job/imagejob"
)

func newStatsCmd() *cobra.Command {
	f := imagejob.NewStatsRequest()
	var out string
	cmd := &cobra.Command{
		Use:   "stats [FEATS.npy|DIR] --out STATS.npz",
		Short: "Gaussian statistics (mu, sigma) of a feature set or a folder of images, as pytorch-fid writes them",
		Args:  args(cobra.MaximumNArgs(1)),
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
			what := "rows" // what the statistics are of: the bar's label
			if anyFolder(f.In) {
				what = "images"
			}
			return runToNPZ(cmd, imagejob.Stats, &f, out, what, func(r *imagejob.StatsResult) { r.Path = out }, f.In)
		},
	}
	cmd.Flags().Bool("json", false, "print a JSON summary of the file written")
	cmd.Flags().StringVar(&out, "out", "", "statistics file to write (.npz)")
	cmd.Flags().IntVar(&f.Shard, "shard", 0, "with --shards: this process's 0-based shard index (default $"+imagejob.EnvJobCompletionIndex+", else $"+imagejob.EnvSlurmArrayTaskID+" - $"+imagejob.EnvSlurmArrayTaskMin+")")
	bindFlags(cmd, &f)
	return cmd
}

func newStatsMergeCmd() *cobra.Command {
	var f imagejob.StatsMergeRequest
	var out string
	cmd := &cobra.Command{
		Use:   "merge PARTS... --out STATS.npz [--allow-missing]",
		Short: "Merge the part files of 'genlens stats --shards K' into one statistics file",
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
			return runToNPZ(cmd, imagejob.StatsMerge, &f, out, "parts", func(r *imagejob.StatsMergeResult) { r.Path = out }, f.Parts...)
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "statistics file to write (.npz)")
	cmd.Flags().Bool("json", false, "print a JSON summary")
	bindFlags(cmd, &f)
	return cmd
}

// runToNPZ runs the job of cmd, fn, on req with a progress bar (label),
// writes the statistics file of its result to out, and prints the
// result (after setPath, if not nil, has recorded out in it). An out
// that is not .npz, or is one of the inputs, is refused before any work.
func runToNPZ[Req any, Res interface{ Artifact(string) job.Artifact }](cmd *cobra.Command, fn func(context.Context, job.Env, Req) (Res, error),
	req *Req, out, label string, setPath func(Res), inputs ...string) error {
	if !strings.HasSuffix(strings.ToLower(out), ".npz") {
		return badUsage("%s: --out %s: want an .npz path", cmd.CommandPath()[len(cmd.Root().Name())+1:], out)
	}
	if in := sameFileAs(out, inputs...); in != "" {
		return badUsage("%s: --out %s is the input %s; refusing to overwrite it", cmd.CommandPath()[len(cmd.Root().Name())+1:], out, in)
	}
	res, err := runJob(cmd, fn, *req, label)
	if err != nil {
		return err
	}
	if err := atomicfile.Write(out, res.Artifact(filepath.Base(out)).Write); err != nil {
		return fmt.Errorf("writing %s: %w", out, err)
	}
	if setPath != nil {
		setPath(res)
	}
	return emit(cmd, "", nil, res, func(w io.Writer) { jobOf(cmd).Text(w, any(req).(job.Request), res) })
}

func newCompareCmd() *cobra.Command {
	f := imagejob.NewCompareRequest()
	var kernelName, gamma string
	cmd := &cobra.Command{
		Use:   "compare REAL FAKE | --real DIR|R.(npy|npz) --fake DIR|F.(npy|npz) [flags]",
		Short: "FID (and on request KID, MMD², CMS, PRDC, Vendi, CMMD) between real and generated images or feature sets",
		// torch-fidelity's command is fidelity: typed here, it is pointed
		// to compare, whose unknown-flag errors translate its flags.
		SuggestFor: []string{"fidelity", "torch-fidelity"},
		Args:       args(cobra.MaximumNArgs(2)),
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
			return runEmit(cmd, &f, "", nil, stages)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&kernelName, "kernel", "rbf", "mmd, cms: kernel, rbf, laplacian, poly, cosine or linear")
	fl.StringVar(&gamma, "gamma", "median", "mmd, cms: bandwidth of rbf/laplacian/poly: dim (1/d), median, or a number")
	markGivenOnly(cmd, "kernel", "gamma")
	bindFlags(cmd, &f)
	return cmd
}

func newISCmd() *cobra.Command {
	f := imagejob.NewISRequest()
	cmd := &cobra.Command{
		Use:   "is P.npy|DIR | --probs P.npy | --images DIR [--splits 10] [--json]",
		Short: "Inception Score from class-probability rows or a folder of images",
		Args:  args(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			which := "probs"
			if len(a) == 1 && anyFolder(a[0]) {
				which = "images"
			}
			if err := positional(cmd, a, which); err != nil {
				return err
			}
			return runEmit(cmd, &f, "", nil, []string{"images"})
		},
	}
	bindFlags(cmd, &f)
	return cmd
}
