package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/genlens/genlens/checkmodel"
	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/job/msejob"
)

func newMSECmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mse",
		Short: "Estimate a regression model's MSE in production before the labels arrive (one-step MSE estimation)",
		Long:  helpText("mse"),
		Args:  args(cobra.NoArgs),
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	// fit, estimate and bench are added from commands.All (see addCommands).
	return cmd
}

// ---------------------------------------------------------------- fit

func newMSEFitCmd() *cobra.Command {
	f := msejob.NewFitRequest()
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "fit --train TRAIN.csv --target COL --prediction COL --model CHECK.json [flags]",
		Short:   "Train a check model on labelled reference data and save it as JSON",
		Long:    helpText("mse-fit"),
		Example: helpExamples("mse-fit"),
		Args:    args(cobra.NoArgs),
		RunE:    func(cmd *cobra.Command, _ []string) error { return runMSEFit(cmd, f, asJSON) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.Train, "train", "", "labelled reference data (CSV)")
	fl.StringVar(&f.Target, "target", "", "target column (name, or 0-based index without a header)")
	fl.StringVar(&f.Prediction, "prediction", "", "column holding the deployed model's prediction f(x)")
	fl.StringSliceVar(&f.Features, "features", nil, "feature columns (default: all other columns)")
	fl.StringVar(&f.Header, "header", f.Header, "does the first row hold column names: auto, yes or no (estimate reads its data the same way)")
	fl.StringVar(&f.Objective, "objective", f.Objective, "training objective: kstar, k or l")
	fl.Float64Var(&f.Lambda, "lambda", f.Lambda, "weight of the regulariser R in objective l")
	fl.IntVar(&f.Epochs, "epochs", f.Epochs, "training epochs (full batch); with --epoch-selection validation, the most tried")
	fl.StringVar(&f.EpochSelection, "epoch-selection", f.EpochSelection, "fixed: train --epochs epochs (the paper's 200); validation: choose the count by the objective on 20% of the reference rows held out, then train on all")
	fl.Float64Var(&f.LR, "lr", f.LR, "Adam learning rate")
	fl.Uint64Var(&f.Seed, "seed", f.Seed, "random seed (weights); the same seed gives the same model")
	fl.IntVar(&f.Folds, "folds", f.Folds, "cross-fitting folds that calibrate the estimates to the realised MSE on held-out reference rows (which must not be the rows f was trained on); 0: uncalibrated (the paper's Eq. 11)")
	fl.StringVar(&f.Model, "model", "", "where to write the check model (JSON)")
	fl.BoolVar(&asJSON, "json", false, "print one JSON document")
	sepFlag(cmd, &f.Sep)
	return cmd
}

func runMSEFit(cmd *cobra.Command, f msejob.FitRequest, asJSON bool) error {
	if err := f.Validate(); err != nil {
		return err
	}
	if sameFileAs(f.Model, f.Train) != "" {
		return badUsage("mse fit: --model %s is the training file; refusing to overwrite it", f.Model)
	}
	if err := mseRefuseForeign(f.Model); err != nil {
		return err
	}
	if err := guardOutFile("--model", f.Model); err != nil {
		return err
	}
	res, err := runJob(cmd, msejob.Fit, f)
	if err != nil {
		return err
	}
	if err := dataio.WriteJSON(f.Model, res.Check); err != nil {
		return fmt.Errorf("--model: %w", err)
	}
	return emit(cmd, "", nil, asJSON, res, func(w io.Writer) {
		fmt.Fprintf(w, "check model (%s) trained on %d rows of %s, %d features: %s\n", res.Objective, res.Rows, f.Train, len(res.Features), strings.Join(res.Features, ", "))
		fmt.Fprintf(w, "reference MSE of %s: realised %s, estimated %s (in-sample", res.Prediction, fmtNum(float64(res.ReferenceRealizedMSE)), fmtNum(float64(res.ReferenceEstimatedMSE)))
		if c := res.Check.Calibration; c.Folds > 0 {
			fmt.Fprintf(w, "; raw %s x calibration %s from %d held-out folds", fmtNum(float64(res.ReferenceRawEstimatedMSE)), fmtNum(float64(res.CalibrationFactor)), c.Folds)
		}
		fmt.Fprintln(w, ")")
		fmt.Fprintf(w, "saved to %s\n", f.Model)
	})
}

// mseRefuseForeign refuses to overwrite an existing file that is not a
// genlens check model (a mistyped --model pointing at data, say).
func mseRefuseForeign(path string) error {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return badUsage("mse fit: --model %s: %v", path, pe.Err)
	}
	if err != nil {
		return badUsage("mse fit: --model %s: %v", path, err)
	}
	var probe struct {
		Format string `json:"format"`
	}
	if json.Unmarshal(b, &probe) != nil || probe.Format != checkmodel.FormatVersion {
		return badUsage("mse fit: --model %s exists and is not a genlens check model; refusing to overwrite it", path)
	}
	return nil
}

// ---------------------------------------------------------------- estimate

func newMSEEstimateCmd() *cobra.Command {
	f := msejob.NewEstimateRequest()
	var out string
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "estimate --model CHECK.json --data OP.csv [--chunk-size N | --chunks K | --timestamp COL --period day] [flags]",
		Short:   "Estimate the MSE of operational data chunk by chunk, with bands, thresholds and alerts",
		Long:    helpText("mse-estimate"),
		Example: helpExamples("mse-estimate"),
		Args:    args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runEmit(cmd, &f, out, asJSON, mseEstimateOutputs, nil)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.Model, "model", "", "check model file from 'genlens mse fit'")
	fl.StringVar(&f.Data, "data", "", "operational data (CSV)")
	fl.IntVar(&f.ChunkSize, "chunk-size", 0, "rows per chunk")
	fl.IntVar(&f.Chunks, "chunks", 0, "number of chunks (default 10 when no chunking is given)")
	fl.StringVar(&f.Timestamp, "timestamp", "", "timestamp column, for --period chunks")
	fl.StringVar(&f.Period, "period", "", "calendar period of a chunk: hour, day, week, month, quarter or year")
	fl.StringVar(&f.Target, "target", "", "target column, when some labels have arrived: adds the realised MSE")
	fl.Float64Var(&f.MaxOutOfReference, "max-out-of-reference", f.MaxOutOfReference, "fraction of a chunk's rows outside the reference ranges above which its estimate is marked extrapolating")
	fl.StringVar(&out, "out", "", "directory for chunks.csv, estimate.json and mse_chunks.png")
	fl.BoolVar(&asJSON, "json", false, "print one JSON document")
	sepFlag(cmd, &f.Sep)
	return cmd
}

// mseEstimateOutputs are the files 'mse estimate --out' writes.
var mseEstimateOutputs = []string{"chunks.csv", "estimate.json", "mse_chunks.png"}

// ---------------------------------------------------------------- bench

func newMSEBenchCmd() *cobra.Command {
	f := msejob.NewBenchRequest()
	var out string
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "bench --dataset synthetic-a|synthetic-b|synthetic-c|PATH.csv [flags]",
		Short:   "Compare the one-step check models with the two-step baselines (one-step MSE estimation, Tables 1 and 3)",
		Long:    helpText("mse-bench"),
		Example: helpExamples("mse-bench"),
		Args:    args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runEmit(cmd, &f, out, asJSON, mseBenchOutputs, []string{"mse bench"})
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.Dataset, "dataset", "", "synthetic-a, synthetic-b, synthetic-c, or a CSV file (target in column 0)")
	fl.IntVar(&f.Trials, "trials", f.Trials, "number of trials")
	fl.StringSliceVar(&f.Methods, "methods", f.Methods, "methods to compare; kstar-cal (K* calibrated on held-out folds, as mse fit) may be added")
	fl.Uint64Var(&f.Seed, "seed", f.Seed, "random seed")
	fl.StringVar(&out, "out", "", "directory for bench.md (a table like the paper's), trials.csv and bench.json")
	fl.BoolVar(&asJSON, "json", false, "print one JSON document")
	sepFlag(cmd, &f.Sep)
	return cmd
}

// mseBenchOutputs are the files 'mse bench --out' writes.
var mseBenchOutputs = []string{"bench.md", "trials.csv", "bench.json"}
