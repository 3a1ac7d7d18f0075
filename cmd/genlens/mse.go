package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/job/msejob"
	"github.com/genlens/genlens/metric/checkmodel"
)

func newMSECmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mse",
		Short: "Estimate a regression model's MSE in production before the labels arrive (one-step MSE estimation)",
		Args:  args(cobra.NoArgs),
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	// fit, estimate and bench are added from commands.All (see addCommands).
	return cmd
}

// ---------------------------------------------------------------- fit

func newMSEFitCmd() *cobra.Command {
	f := msejob.NewFitRequest()
	cmd := &cobra.Command{
		Use:   "fit --train TRAIN.csv --target COL --prediction COL --model CHECK.json [flags]",
		Short: "Train a check model on labelled reference data and save it as JSON",
		Args:  args(cobra.NoArgs),
		RunE:  func(cmd *cobra.Command, _ []string) error { return runMSEFit(cmd, f) },
	}
	bindFlags(cmd, &f)
	return cmd
}

func runMSEFit(cmd *cobra.Command, f msejob.FitRequest) error {
	if err := f.Validate(); err != nil {
		return err
	}
	if sameFileAs(f.Model, f.Train) != "" {
		return badUsage("mse fit: --model %s is the training file; refusing to overwrite it", f.Model)
	}
	// A mistyped --model pointing at data must not replace it.
	if exists, model, err := checkmodel.Probe(f.Model); err != nil {
		return badUsage("mse fit: --model %s: %v", f.Model, err)
	} else if exists && !model {
		return badUsage("mse fit: --model %s exists and is not a genlens check model; refusing to overwrite it", f.Model)
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
	return emit(cmd, "", nil, res, func(w io.Writer) { jobOf(cmd).Text(w, &f, res) })
}

// ---------------------------------------------------------------- estimate

func newMSEEstimateCmd() *cobra.Command {
	f := msejob.NewEstimateRequest()
	var out string
	cmd := &cobra.Command{
		Use:   "estimate --model CHECK.json --data OP.csv [--chunk-size N | --chunks K | --timestamp COL --period day] [flags]",
		Short: "Estimate the MSE of operational data chunk by chunk, with bands, thresholds and alerts",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runEmit(cmd, &f, out, mseEstimateOutputs, nil)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&out, "out", "", "directory for chunks.csv, estimate.json and mse_chunks.png")
	bindFlags(cmd, &f)
	return cmd
}

// mseEstimateOutputs are the files 'mse estimate --out' writes.
var mseEstimateOutputs = []string{"chunks.csv", "estimate.json", "mse_chunks.png"}

// ---------------------------------------------------------------- bench

func newMSEBenchCmd() *cobra.Command {
	f := msejob.NewBenchRequest()
	var out string
	cmd := &cobra.Command{
		Use:   "bench --dataset synthetic-a|synthetic-b|synthetic-c|PATH.csv [flags]",
		Short: "Compare the one-step check models with the two-step baselines (one-step MSE estimation, Tables 1 and 3)",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runEmit(cmd, &f, out, mseBenchOutputs, []string{"mse bench"})
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&out, "out", "", "directory for bench.md (a table like the paper's), trials.csv and bench.json")
	bindFlags(cmd, &f)
	return cmd
}

// mseBenchOutputs are the files 'mse bench --out' writes.
var mseBenchOutputs = []string{"bench.md", "trials.csv", "bench.json"}
