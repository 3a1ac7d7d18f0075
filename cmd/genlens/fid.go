package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/genlens/genlens/internal/atomicfile"
	"github.com/genlens/genlens/job/imagejob"
)

// fidDims are the Inception outputs pytorch-fid's --dims chooses from.
var fidDims = []int{64, 192, 768, 2048}

// newFIDCmd is `python -m pytorch_fid` as a genlens command: the same two
// paths, the same flags and the same "FID:  x" line, over the compare job
// (and, with --save-stats, the stats job), so that a user of pytorch-fid
// can swap the command and keep the rest of a script.
func newFIDCmd() *cobra.Command {
	var batch, workers, dims int
	var device, weights string
	var saveStats, asJSON bool
	cmd := &cobra.Command{
		Use:     "fid PATH PATH [--batch-size N] [--dims 64|192|768|2048] [--device cpu] [--num-workers N] [--save-stats]",
		Short:   "FID between two folders (or statistics .npz files) with pytorch-fid's command line",
		Long:    helpText("fid"),
		Example: helpExamples("fid"),
		Args: func(cmd *cobra.Command, a []string) error {
			if len(a) != 2 {
				return badUsage("fid: want two paths (folders of images or statistics .npz files), got %d (see '%s --help')", len(a), cmd.CommandPath())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, a []string) error {
			if err := fidDevice(device); err != nil {
				return err
			}
			if !slices.Contains(fidDims, dims) {
				return badUsage("fid: --dims %d: want one of 64, 192, 768, 2048 (Inception's outputs, as pytorch-fid)", dims)
			}
			if batch < 1 {
				return badUsage("fid: --batch-size %d: want 1 or more", batch)
			}
			if workers < 0 {
				return badUsage("fid: --num-workers %d: want 0 (one per CPU) or more", workers)
			}
			opt := imagejob.ImageOptions{Weights: weights, Batch: batch, Workers: workers}
			if saveStats {
				return fidSaveStats(cmd, a[0], a[1], strconv.Itoa(dims), opt, asJSON)
			}
			req := imagejob.NewCompareRequest()
			req.Real, req.Fake, req.Metrics = a[0], a[1], "fid"
			if anyFolder(a[0], a[1]) {
				req.Dims = strconv.Itoa(dims)
			}
			req.ImageOptions = opt
			res, err := runJob(cmd, imagejob.Compare, req, append(req.Stages(anyFolder(req.Real, req.Fake)), "")...)
			if err != nil {
				return err
			}
			return emit(cmd, "", nil, res, func(w io.Writer) {
				fmt.Fprintf(w, "FID:  %s\n", pyFloat(float64(*res.FID)))
				// pytorch-fid's stdout is the FID line alone; the rest
				// goes where its progress bars go.
				res.Images.WriteText(cmd.ErrOrStderr())
			})
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&batch, "batch-size", 50, "images run through the network together")
	fl.IntVar(&workers, "num-workers", 0, "goroutines decoding and embedding images (0: one per CPU)")
	fl.StringVar(&device, "device", "cpu", "cpu; genlens runs on the CPU only")
	fl.IntVar(&dims, "dims", 2048, "Inception feature: 64, 192, 768 or 2048 (pool3)")
	fl.BoolVar(&saveStats, "save-stats", false, "write the statistics (mu, sigma) of the first path's images to the second path, an .npz that must not exist")
	fl.StringVar(&weights, "weights", "", "FID Inception weights (.pth); default the cache, else a one-time download of pytorch-fid's")
	fl.BoolVar(&asJSON, "json", false, "print one JSON document (compare's, or stats' with --save-stats)")
	return cmd
}

// fidDevice accepts pytorch-fid's --device when it names the CPU and
// refuses an accelerator with what genlens does instead.
func fidDevice(d string) error {
	switch strings.ToLower(strings.TrimSpace(d)) {
	case "", "cpu":
		return nil
	}
	return badUsage("fid: --device %s: genlens runs on the CPU only (pure Go, no CUDA): Inception-v3 costs about 0.14 CPU-seconds an image, so 2 × 10,000 images take about 47 CPU-minutes (25 minutes on 2 cores, 3 on 16), and a second run reads the features from its cache; leave out --device or say --device cpu", d)
}

// fidSaveStats is pytorch-fid's --save-stats: the first path's statistics
// written to the second, which must not exist (an .npz suffix is added
// when missing, as NumPy's savez does).
func fidSaveStats(cmd *cobra.Command, in, out, dims string, opt imagejob.ImageOptions, asJSON bool) error {
	if _, err := os.Stat(in); err != nil {
		return badUsage("fid --save-stats: invalid path: %s", in)
	}
	if st, err := os.Stat(out); err == nil && !st.Mode().IsRegular() { // /dev/null: not /dev/null.npz
		return badUsage("fid --save-stats: %s is not a regular file: the second path is the .npz of statistics to write", out)
	}
	if !strings.HasSuffix(strings.ToLower(out), ".npz") {
		out += ".npz"
	}
	if _, err := os.Stat(out); err == nil {
		return badUsage("fid --save-stats: existing output file: %s (the second path is the statistics to write)", out)
	}
	req := imagejob.NewStatsRequest()
	req.In, req.ImageOptions = in, opt
	if anyFolder(in) {
		req.Dims = dims
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "Saving statistics for %s\n", in)
	res, err := runJob(cmd, imagejob.Stats, req, "images")
	if err != nil {
		return err
	}
	if err := atomicfile.Write(out, res.Artifact(filepath.Base(out)).Write); err != nil {
		return fmt.Errorf("writing %s: %w", out, err)
	}
	res.Path = out
	return emit(cmd, "", nil, res, func(w io.Writer) {
		fmt.Fprintf(w, "wrote %s: mu (%d), sigma (%d x %d) from %d images\n", out, res.Dim, res.Dim, res.Dim, res.N)
		res.Images.WriteText(cmd.ErrOrStderr())
	})
}

// pyFloat formats v as Python's repr of a float, which pytorch-fid's
// print shows: the shortest digits that round-trip, ".0" on a whole
// number, an exponent below 1e-4 and from 1e16.
func pyFloat(v float64) string {
	switch {
	case math.IsNaN(v):
		return "nan"
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	}
	if a := math.Abs(v); a != 0 && (a < 1e-4 || a >= 1e16) {
		return strconv.FormatFloat(v, 'e', -1, 64) // 1e-05, 1.5e+16: Python's spelling
	}
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if !strings.ContainsAny(s, ".") {
		s += ".0"
	}
	return s
}
