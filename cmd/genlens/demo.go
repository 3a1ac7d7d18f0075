package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/genlens/genlens/internal/buildinfo"
	"github.com/genlens/genlens/internal/console"
	"github.com/genlens/genlens/internal/demo"

	"github.com/spf13/cobra"
)

func newDemoCmd() *cobra.Command {
	var out string
	var seed uint64
	cmd := &cobra.Command{
		Use:   "demo [--out DIR]",
		Short: "End-to-end tour on data generated in code (no files needed)",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDemo(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), out, seed)
		},
	}
	cmd.Flags().StringVar(&out, "out", "genlens-demo", "report directory")
	cmd.Flags().Uint64Var(&seed, "seed", 1, "random seed")
	return cmd
}

func runDemo(ctx context.Context, w, stderr io.Writer, dir string, seed uint64) error {
	if err := prepareOut(dir); err != nil {
		return err
	}
	report, finish := console.Stages(stderr, "demo")
	defer finish()
	err := demo.Run(ctx, w, dir, demo.Options{
		Seed:     seed,
		Version:  "genlens " + buildinfo.Version(),
		Date:     time.Now().Format("2006-01-02"),
		Progress: report,
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\nreport: %s/index.html (and report.md)\n", dir)
	return nil
}
