package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/genlens/genlens/internal/buildinfo"
	"github.com/genlens/genlens/internal/console"
	"github.com/genlens/genlens/internal/demo"

	"github.com/spf13/cobra"
)

func newDemoCmd() *cobra.Command {
	var out, data string
	var seed uint64
	cmd := &cobra.Command{
		Use:   "demo [--out DIR | --data DIR]",
		Short: "End-to-end tour on data generated in code (no files needed), or the README examples' input files",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if data != "" {
				if err := demo.WriteTourData(cmd.Context(), data, seed); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "wrote %s in %s\n", strings.Join(demo.TourFiles, ", "), data)
				return nil
			}
			return runDemo(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), out, seed)
		},
	}
	cmd.Flags().StringVar(&out, "out", "genlens-demo", "report directory")
	cmd.Flags().StringVar(&data, "data", "", "instead of the tour, write the README examples' inputs into this directory: "+strings.Join(demo.TourFiles, ", ")+" (existing files are never replaced)")
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
