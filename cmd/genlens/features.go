package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/genlens/genlens/internal/atomicfile"
	"github.com/genlens/genlens/job/imagejob"
)

func newFeaturesCmd() *cobra.Command {
	f := imagejob.NewFeaturesRequest()
	var out string
	cmd := &cobra.Command{
		Use:   "features DIR --out FEATS.npy [--dims 2048] [--mode pytorch-fid|tf|clean] [flags]",
		Short: "Inception-v3 features of a folder of images, as pytorch-fid computes them",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			f.Input = a[0]
			return runFeatures(cmd, f, out)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&out, "out", "", "output .npy file (float32, images x dims); must not exist")
	fl.Bool("json", false, "print a JSON summary")
	fl.IntVar(&f.Shard, "shard", 0, "with --shards: this process's 0-based shard index (default $"+imagejob.EnvJobCompletionIndex+", else $"+imagejob.EnvSlurmArrayTaskID+" - $"+imagejob.EnvSlurmArrayTaskMin+")")
	bindFlags(cmd, &f)
	return cmd
}

func runFeatures(cmd *cobra.Command, f imagejob.FeaturesRequest, out string) error {
	if out == "" {
		return badUsage("features: --out FILE.npy is required")
	}
	var err error
	if f.Shard, out, err = resolveShard(cmd, "features", f.Shards, f.Shard, out); err != nil {
		return err
	}
	// Refuse before hours of work, not after: the features of another run
	// (or an input) must not be replaced by accident.
	if _, err := os.Lstat(out); err == nil {
		return badUsage("features: --out %s exists; remove it or choose another name", out)
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("features: --out %s: %w", out, err)
	}
	res, err := runJob(cmd, imagejob.Features, f, "features")
	if err != nil {
		return err
	}
	if err := atomicfile.Write(out, res.WriteNPY); err != nil {
		return fmt.Errorf("writing %s: %w", out, err)
	}
	res.Path = out
	return emit(cmd, "", nil, res, func(w io.Writer) { jobOf(cmd).Text(w, &f, res) })
}

// resolveShard settles the shard of a sharded run (--shards K): the index
// from --shard or the scheduler's environment (imagejob.ShardIndex), {shard} in
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
	i, err := imagejob.ShardIndex(name, shards, shard, given, os.Getenv)
	if err != nil {
		return shard, out, err
	}
	out = strings.ReplaceAll(out, "{shard}", strconv.Itoa(i))
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return i, out, fmt.Errorf("--out %s: %w", out, err)
	}
	return i, out, nil
}
