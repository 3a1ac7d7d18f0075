package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"genlens/features"
	"genlens/inception"
	"genlens/internal/atomicfile"
	"genlens/job"
	"genlens/vit"
)

func newFeaturesCmd() *cobra.Command {
	f := job.NewFeaturesRequest()
	var out string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "features DIR --out FEATS.npy [--dims 2048] [--mode pytorch-fid|tf|clean] [flags]",
		Short: "Inception-v3 features of a folder of images, as pytorch-fid computes them",
		Long: `features runs the FID Inception-v3 network (pytorch-fid's port of the 2015
TensorFlow graph; Szegedy et al., CVPR 2016) on every image of DIR and writes
one row of features per image to --out as a float32 .npy array, rows in sorted
file order. Images: png, jpg/jpeg, bmp, tif/tiff, webp in any case, of any
size (each is resized to 299x299); --recursive descends into subfolders.

--dims: 2048 (pool3, the FID feature), 64, 192 or 768 (earlier maps, averaged
over space as pytorch-fid does), logits (fc, 1008 classes) or logits_unbiased
(fc without bias, torch-fidelity's input to the Inception Score).

--mode pytorch-fid: PIL RGB conversion, torch bilinear resize, 2x-1 (the
numbers pytorch-fid prints). --mode tf: torch-fidelity's port of the
TensorFlow 1.x resize on uint8 values, (x-128)/128 (the original TensorFlow
FID code). --mode clean: clean-fid's default, each channel resized as a float
image by Pillow's bicubic filter (antialiased when downscaling; bit for bit as
Pillow computes it), clipped to [0, 255], (x-128)/128 (the numbers clean-fid
prints). Statistics are comparable only within one mode.

Features are kept in a cache keyed by each image file's content and the
settings (mode, dims, weights): a later run over the same images, by
features, stats, compare, is or select, reads them instead of running the
network. The cache lives in $GENLENS_CACHE, else the user cache directory
(~/.cache/genlens on Linux), 8 KiB per image for pool3; --no-cache neither
reads nor writes it.

Weights: --weights PATH, else $GENLENS_WEIGHTS, else the user cache
(pt_inception-2015-12-05-6726825d.pth), else a one-time download from
pytorch-fid's GitHub release, checked against its published SHA-256. Offline,
download that file by hand and pass it with --weights.

--shards K computes the features of one shard of DIR only, split as
'genlens stats --shards' splits it (a hash of each image's relative path), so
K processes of a cluster job array write K files that hold every image once;
every command reading feature files reads them together from a quoted
pattern (--fake 'parts/*.npy'). The 0-based shard index is --shard, else
$JOB_COMPLETION_INDEX, else $SLURM_ARRAY_TASK_ID - $SLURM_ARRAY_TASK_MIN;
"{shard}" in --out is replaced by it.`,
		Example: `  genlens features samples/ --out samples_pool3.npy
  genlens features real/ --out real_logits.npy --dims logits --mode tf --json
  genlens features data/ --recursive --weights ~/models/pt_inception-2015-12-05-6726825d.pth --out f.npy
  genlens features gen/ --shards 8 --out parts/gen-{shard}.npy   # in each of 8 array tasks`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			f.Input = a[0]
			return runFeatures(cmd, f, out, asJSON)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&out, "out", "", "output .npy file (float32, images x dims); must not exist")
	fl.StringVar(&f.Dims, "dims", f.Dims, "64, 192, 768, 2048, logits or logits_unbiased")
	fl.StringVar(&f.Embedder, "embedder", "", "network: inception (default) or "+strings.Join(vit.Names(), ", ")+" (these need --weights)")
	fl.StringVar(&f.Preset, "preset", "", "DINOv2/CLIP preprocessing: dgm-eval (DINOv2 default) or torch-fidelity; clip (clip-vitb32 default) or cmmd (clip-vitl14-336 default)")
	fl.StringVar(&f.Mode, "mode", f.Mode, "Inception preprocessing: pytorch-fid, tf (torch-fidelity / TensorFlow) or clean (clean-fid)")
	fl.StringVar(&f.Weights, "weights", "", "FID Inception weights (.pth); default $"+inception.WeightsEnv+", cache, download")
	fl.IntVar(&f.Batch, "batch", f.Batch, "images decoded and run together")
	fl.IntVar(&f.Workers, "workers", 0, "goroutines (0: one per CPU)")
	fl.BoolVar(&f.Recursive, "recursive", false, "include images in subfolders")
	fl.BoolVar(&f.NoCache, "no-cache", false, "neither read nor write the feature cache ($"+features.CacheEnv+", default <user cache dir>/genlens, e.g. ~/.cache/genlens)")
	fl.BoolVar(&asJSON, "json", false, "print a JSON summary")
	fl.IntVar(&f.Shards, "shards", 0, "split DIR into K shards and compute this process's shard only")
	fl.IntVar(&f.Shard, "shard", 0, "with --shards: this process's 0-based shard index (default $"+job.EnvJobCompletionIndex+", else $"+job.EnvSlurmArrayTaskID+" - $"+job.EnvSlurmArrayTaskMin+")")
	return cmd
}

func runFeatures(cmd *cobra.Command, f job.FeaturesRequest, out string, asJSON bool) error {
	if out == "" {
		return badUsage("features: --out FILE.npy is required")
	}
	var err error
	if f.Shard, out, err = resolveShard(cmd, "features", f.Shards, f.Shard, out); err != nil {
		return err
	}
	if err := f.Validate(); err != nil {
		return err
	}
	// Refuse before hours of work, not after: the features of another run
	// (or an input) must not be replaced by accident.
	if _, err := os.Lstat(out); err == nil {
		return badUsage("features: --out %s exists; remove it or choose another name", out)
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("features: --out %s: %w", out, err)
	}
	if e := strings.ToLower(strings.TrimSpace(f.Embedder)); e == "" || e == job.EmbedderInception {
		weights, err := inception.ResolveWeights(cmd.Context(), f.Weights, inception.FetchOptions{Progress: downloadBar(cmd.ErrOrStderr())})
		if err != nil {
			return err
		}
		f.Weights = weights
	}
	res, err := runJob(cmd, job.Features, f, "features")
	if err != nil {
		return err
	}
	if err := atomicfile.Write(out, res.WriteNPY); err != nil {
		return fmt.Errorf("writing %s: %w", out, err)
	}
	return emit(cmd, "", nil, asJSON, res, func(w io.Writer) {
		how := "mode " + res.Mode
		if res.Preset != "" {
			how = res.Embedder + ", preset " + res.Preset
		}
		fmt.Fprintf(w, "%d images -> %s (%d x %d float32, %s, %s); %d from the feature cache; %.1f images/s on %s\n",
			res.Images, out, res.Images, res.Dims, res.Output, how, res.Cached, float64(res.ImagesPerSecond), res.Backend)
		weightsLine(w, res.Weights)
	})
}

// downloadBar returns a byte progress callback for the one-time weights
// download: a bar on a terminal, one line otherwise.
func downloadBar(stderr io.Writer) func(done, total int64) {
	var bar *progressbar.ProgressBar
	announced := false
	return func(done, total int64) {
		if !announced {
			announced = true
			fmt.Fprintf(stderr, "genlens: downloading the Inception weights (once) from %s\n", inception.WeightsURL)
			// stderr is the run's console writer (one bar at a time), so
			// the terminal test looks at the file underneath.
			cw, _ := stderr.(consoleWriter)
			if fl, ok := cw.w.(*os.File); ok && term.IsTerminal(int(fl.Fd())) {
				bar = progressbar.NewOptions64(total, progressbar.OptionSetWriter(fl), progressbar.OptionShowBytes(true),
					progressbar.OptionSetDescription(strings.TrimSuffix(inception.WeightsFile, ".pth")), progressbar.OptionClearOnFinish())
			}
		}
		if bar != nil {
			_ = bar.Set64(done)
		}
	}
}

// resolveShard settles the shard of a sharded run (--shards K): the index
// from --shard or the scheduler's environment (job.ShardIndex), {shard} in
// out replaced by it, and out's folder made, since the processes of a job
// array share one folder of parts and the first to get here makes it. It
// returns the index and the output path; without --shards it changes nothing.
func resolveShard(cmd *cobra.Command, name string, shards, shard int, out string) (int, string, error) {
	given := cmd.Flags().Changed("shard")
	if given && shards == 0 {
		return shard, out, badUsage("%s: --shard without --shards K", name)
	}
	if shards == 0 {
		return shard, out, nil
	}
	i, err := job.ShardIndex(name, shards, shard, given, os.Getenv)
	if err != nil {
		return shard, out, err
	}
	out = strings.ReplaceAll(out, "{shard}", strconv.Itoa(i))
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return i, out, fmt.Errorf("--out %s: %w", out, err)
	}
	return i, out, nil
}
