package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"genlens/job"
	"genlens/linalg"
)

// Exit codes (SPEC "Data and CLI conventions").
const (
	exitOK      = 0
	exitFailure = 1
	exitBadUse  = 2
)

// usageError marks bad flags or arguments: exit code 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func badUsage(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes the CLI with args and returns the exit code; it is the
// testable entry point.
func run(args []string, stdout, stderr io.Writer) int {
	root := newRoot(stdout, stderr)
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return exitOK
	}
	fmt.Fprintln(stderr, "genlens:", message(err))
	return exitCode(err)
}

// exitCode maps an error to the exit status: the job layer's
// classification (job.Kind.ExitCode), with the command line's own usage
// errors (bad flags, wrong arguments) as exit 2.
func exitCode(err error) int {
	var ue usageError
	if errors.As(err, &ue) || isFlagError(err) {
		return exitBadUse
	}
	return job.Classify(err).ExitCode()
}

// message renders err for stderr: request fields spelled as flags.
func message(err error) string {
	var fe *job.FieldError
	if errors.As(err, &fe) && err == error(fe) {
		return fe.Render(job.Flag)
	}
	if errors.As(err, &fe) {
		// A wrapped field error: render the field part, keep the context.
		return strings.Replace(err.Error(), fe.Error(), fe.Render(job.Flag), 1)
	}
	return err.Error()
}

func newRoot(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "genlens",
		Short: "Evaluate generative models without enough labels",
		Long: `genlens evaluates generative models from their samples.

  entropy     kernel entropy of sampled LLM answers per prompt, with AUROC
  decompose   kernel score = noise + bias + variance of an ensemble
  correlate   distributional correlation between training epochs
  stats       Gaussian feature statistics (mu, sigma) as .npz
  compare     FID, KID, MMD², CMS between real and generated features
  is          Inception Score from class probabilities
  select      online selection of the best generator (FID-UCB, IS-UCB)
  disentangle pixel-cluster diagnostics of image generators
  cka         CKA between two representations of the same examples
  hallucination posterior hallucination rate of in-context learning
  mse         a regression model's MSE in production, before labels arrive
  demo        an end-to-end tour on data generated in code

Exit codes: 0 ok, 1 runtime failure, 2 bad usage or bad input.
BLAS backend: ` + linalg.Backend(),
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, a []string) error {
			if len(a) > 0 {
				return badUsage("unknown command %q (see 'genlens --help')", a[0])
			}
			return cmd.Help()
		},
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageError{fmt.Errorf("%s: %w (see '%s --help')", c.Name(), err, c.CommandPath())}
	})
	root.AddCommand(newEntropyCmd(), newDecomposeCmd(), newCorrelateCmd(), newDemoCmd())
	for _, c := range extraCommands {
		root.AddCommand(c())
	}
	return root
}

// extraCommands holds the constructors of subcommands defined in their own
// files (one file per method family), which append to it from init.
var extraCommands []func() *cobra.Command

// isFlagError recognises cobra's own argument errors (unknown command,
// wrong number of positional arguments), which arrive as plain errors.
func isFlagError(err error) bool {
	var ae argsError
	return errors.As(err, &ae)
}

type argsError struct{ error }

// args wraps a cobra positional-argument validator so its error is a usage
// error.
func args(v cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, a []string) error {
		if err := v(cmd, a); err != nil {
			return argsError{err}
		}
		return nil
	}
}
