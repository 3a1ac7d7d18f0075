package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/genlens/genlens/frechet"
	"github.com/genlens/genlens/inception"
	"github.com/genlens/genlens/job/imagejob"
	"github.com/genlens/genlens/vit"
)

func newSelectCmd() *cobra.Command {
	f := imagejob.NewSelectRequest()
	var out string
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "select --score fid|is --pools G1.npy|DIR G2.npy|DIR ... [--ref R.npy|STATS.npz|DIR] [flags]",
		Short:   "Online selection of the best generator (FID-UCB, IS-UCB) simulated on sample pools",
		Long:    helpText("select"),
		Example: helpExamples("select"),
		Args:    args(cobra.ArbitraryArgs),
		RunE: func(cmd *cobra.Command, extra []string) error {
			f.Pools = append(f.Pools, extra...)
			return runSelect(cmd, f, out, asJSON)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.Score, "score", f.Score, "fid or is")
	fl.StringSliceVar(&f.Pools, "pools", nil, "one sample pool per generator (.npy/.npz/.csv); more may follow as arguments")
	fl.StringVar(&f.Ref, "ref", "", "fid: reference feature rows or statistics .npz (mu, sigma)")
	fl.StringVar(&f.RefKey, "ref-key", "", "array of feature rows inside an .npz --ref (rather than its mu, sigma)")
	fl.StringVar(&f.PoolsKey, "pools-key", "", "array of rows inside each .npz pool")
	fl.StringVar(&f.Algos, "algos", "", "comma-separated algorithms (default: fid-ucb,naive-ucb,greedy or is-ucb,naive-ucb,greedy)")
	fl.IntVar(&f.Steps, "steps", f.Steps, "steps T per trial")
	fl.IntVar(&f.Batch, "batch", f.Batch, "rows b drawn per step")
	fl.IntVar(&f.Trials, "trials", f.Trials, "independent trials")
	fl.Float64Var(&f.Delta, "delta", f.Delta, "failure probability δ of the confidence bounds")
	fl.Float64Var(&f.Tolerance, "tolerance", frechet.ProbTolerance, "is: how far a class-probability row may sum from 1; above the default, rows are rescaled to sum to 1")
	fl.Float64Var(&f.BonusScale, "bonus-scale", f.BonusScale, "multiplier of the confidence bonuses (the unspecified constant of the paper's O~(.); 1 = the proofs' explicit constants)")
	fl.StringVar(&f.FIDBonus, "fid-bonus", f.FIDBonus, "fid-ucb bonus: paper (Eq. 10), code2024 (the authors' FID-eval.py, github yannxiaoyanhu/optimism-based-eval) or fducb2025 (their algorithms/fd_ucb.py, github yannxiaoyanhu/dgm-online-eval; unit-consistent, O(d³) a step)")
	fl.Float64Var(&f.TruncationRatio, "truncation-ratio", f.TruncationRatio, "fid-ucb: covariance entries below this fraction of ||Σ_r||₂ are zeroed (paper, code2024); the authors use 0.005 for Inception-v3, 0.05 for DINOv2 or CLIP")
	fl.Uint64Var(&f.Seed, "seed", f.Seed, "random seed")
	fl.StringVar(&out, "out", "", "directory for steps.csv, regret.png, optimal_pick_ratio.png, select.json")
	fl.StringVar(&f.Embedder, "embedder", "", "folders: network, inception (default) or "+strings.Join(vit.Names(), ", ")+" (these need --weights)")
	fl.StringVar(&f.Preset, "preset", "", "folders, DINOv2/CLIP: preprocessing (dgm-eval, torch-fidelity; clip, cmmd)")
	fl.StringVar(&f.Mode, "mode", "", "folders: preprocessing, pytorch-fid (default), tf (torch-fidelity's) or clean (clean-fid's)")
	fl.StringVar(&f.Weights, "weights", "", "folders: FID Inception weights (.pth); default $"+inception.WeightsEnv+", the cache, else a one-time download")
	fl.IntVar(&f.ImageBatch, "image-batch", 0, fmt.Sprintf("folders: images run through the network together (0: %d)", imagejob.DefaultFeaturesBatch))
	fl.IntVar(&f.Workers, "workers", 0, "folders: goroutines (0: one per CPU)")
	fl.BoolVar(&f.Recursive, "recursive", false, "folders: include images in subfolders")
	fl.BoolVar(&f.NoCache, "no-cache", false, "folders: neither read nor write the feature cache")
	fl.BoolVar(&asJSON, "json", false, "print one JSON document")
	sepFlag(cmd, &f.Sep)
	return cmd
}

// selectOutputs are the files 'select --out' writes.
var selectOutputs = []string{"steps.csv", "regret.png", "optimal_pick_ratio.png", "select.json"}

func runSelect(cmd *cobra.Command, f imagejob.SelectRequest, out string, asJSON bool) error {
	labels := []string{"trials"}
	if anyFolder(append([]string{f.Ref}, f.Pools...)...) {
		labels = []string{"images", "trials"}
	}
	return runEmit(cmd, &f, out, asJSON, selectOutputs, labels)
}
