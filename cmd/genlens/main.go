package main

import (
	"context"
	"errors"
	"fmt"
	"genlens/internal/atomicfile"
	"io"
	"math"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"genlens/job"
	"genlens/linalg"
	"genlens/membudget"
)

// Exit codes: 0 ok, 1 runtime failure, 2 bad usage or bad input, 130
// cancelled (see job.Kind.ExitCode).
const (
	exitOK      = 0
	exitFailure = 1
	exitBadUse  = 2
	// exitInterrupted is job.KindCanceled's code, as a shell reports Ctrl-C.
	exitInterrupted = 130
)

// usageError marks bad flags or arguments: exit code 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func badUsage(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

func main() {
	// Ctrl-C or SIGTERM cancels the running job, which stops at its next
	// check (within about a second) and leaves no half-written output:
	// every write is atomic and is either finished or removed. A second
	// Ctrl-C exits at once, as users expect, after removing the temporary
	// files of writes in progress (atomicfile.RemoveTemps).
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
		again := make(chan os.Signal, 1)
		signal.Notify(again, os.Interrupt, syscall.SIGTERM)
		<-again
		atomicfile.RemoveTemps()
		fmt.Fprintln(os.Stderr, "genlens: interrupted twice: stopped at once")
		os.Exit(exitInterrupted)
	}()
	code := runContext(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run executes the CLI with args and returns the exit code; it is the
// testable entry point.
func run(args []string, stdout, stderr io.Writer) int {
	return runContext(context.Background(), args, stdout, stderr)
}

// runContext is run under ctx, whose cancellation stops the command with
// exit code 130.
func runContext(ctx context.Context, args []string, stdout, stderr io.Writer) (code int) {
	// Go's runtime exits 2 after a panic, the code of bad input: a script
	// could not tell a genlens bug from a bad file. A panic on this
	// goroutine is reported as the internal error it is (fan-outs turn
	// their workers' panics into errors through internal/par).
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "genlens: internal error (please report it): %v\n%s", r, debug.Stack())
			code = exitFailure
		}
	}()
	stdout, stderr = newConsole(stdout, stderr)
	root := newRoot(stdout, stderr)
	root.SetArgs(args)
	ran, err := root.ExecuteContextC(ctx)
	if err == nil {
		return exitOK
	}
	if job.Classify(err) == job.KindCanceled && ctx.Err() != nil {
		fmt.Fprintln(stderr, "genlens: interrupted")
		return exitCode(err)
	}
	fmt.Fprintln(stderr, "genlens:", message(err, ran))
	return exitCode(err)
}

// exitCode maps an error to the exit status: the job layer's
// classification (job.Kind.ExitCode), with the command line's own usage
// errors (bad flags, wrong arguments) as exit 2.
func exitCode(err error) int {
	var ue usageError
	if errors.As(err, &ue) {
		return exitBadUse
	}
	return job.Classify(err).ExitCode()
}

// fieldError is an error whose message names request fields (see
// package internal/fields): job.FieldError, dataio.InputError,
// fields.Error.
type fieldError interface {
	error
	Render(spell func(field string) string) string
}

// message renders err for stderr: request fields spelled as the flags of
// the command that ran (cmd, nil when unknown), and a bad flag pointed to
// the command's help.
func message(err error, cmd *cobra.Command) string {
	var fe fieldError
	if !errors.As(err, &fe) {
		return err.Error()
	}
	msg := fe.Render(flagOf(cmd))
	if err != error(fe) {
		// A wrapped field error: render the field part, keep the context.
		msg = strings.Replace(err.Error(), fe.Error(), msg, 1)
	}
	var bad *job.FieldError
	if errors.As(err, &bad) && cmd != nil && !strings.Contains(msg, "--help") {
		msg += fmt.Sprintf(" (see '%s --help')", cmd.CommandPath())
	}
	return msg
}

// flagOf returns the function that spells a request field as cmd's flag
// (cmd may be nil: the field's usual flag).
func flagOf(cmd *cobra.Command) func(field string) string {
	return func(field string) string {
		if cmd != nil {
			if name, ok := cmd.Annotations["flag:"+field]; ok {
				return "--" + name
			}
		}
		return "--" + strings.ReplaceAll(field, "_", "-")
	}
}

// renamedFlag registers field, the request field of the flag name, as a
// deprecated alias of --name (see deprecatedAlias), and records that cmd
// spells the field as --name in error messages.
func renamedFlag(cmd *cobra.Command, field, name string) {
	deprecatedAlias(cmd.Flags(), field, name)
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations["flag:"+field] = name
}

func newRoot(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "genlens",
		Short: "Evaluate generative models without enough labels",
		Long: `genlens evaluates generative models, and regression models in production,
when there are not enough labels: from their samples, their features, or
their traffic before the labels arrive.

Exit codes: 0 ok, 1 runtime failure, 2 bad usage or bad input, 130 cancelled.
BLAS backend: ` + linalg.Backend(),
		Version:       version(),
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
	deprecationOut = stderr
	addBudgetFlag(root)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		if c == root {
			return usageError{fmt.Errorf("%w (see '%s --help')", err, c.CommandPath())}
		}
		return usageError{fmt.Errorf("%s: %w (see '%s --help')", c.Name(), err, c.CommandPath())}
	})
	addCommands(root)
	return root
}

// addBudgetFlag gives every command --matrix-budget-mb, the memory
// budget of each matrix whose size an input decides (package membudget),
// set for the process before the command runs; 0 keeps the default.
func addBudgetFlag(root *cobra.Command) {
	var mb int64
	root.PersistentFlags().Int64Var(&mb, "matrix-budget-mb", 0, fmt.Sprintf(
		"largest matrix an input may ask for (a covariance, a Gram matrix), in MiB (0: a quarter of the memory, at most %d; here %d)",
		membudget.MaxDefault>>20, membudget.DefaultLimit()>>20))
	root.PersistentPreRunE = func(*cobra.Command, []string) error {
		if mb < 0 || mb > math.MaxInt64>>20 {
			return badUsage("--matrix-budget-mb %d: want 0 (the default) or a positive number of MiB", mb)
		}
		membudget.SetLimit(mb << 20)
		return nil
	}
}

// helpGroups are the sections of the help, by method, each under the
// paper it implements; job.Command.Group names a job's section.
var helpGroups = []cobra.Group{
	{ID: "kernel", Title: "Kernel scores of generative models (Gruber & Buettner, ICML 2024):"},
	{ID: "fidelity", Title: "Feature-based scores and online selection (Heusel et al. 2017; Hu, Leung & Farnia 2024):"},
	{ID: "image", Title: "Pixel-cluster diagnostics (Gruber, Ziegler & Buettner 2024):"},
	{ID: "icl", Title: "Hallucination of in-context learning (Jesson et al., NeurIPS 2024):"},
	{ID: "production", Title: "Models in production:"},
	{ID: "other", Title: "Other commands:"},
}

// jobCommands builds the command of each entry of job.Commands, by its
// name: the flags (over the request's defaults), help and output of the
// job. The list of commands and their help sections come from
// job.Commands; every entry there has a builder here (TestJobCommands).
var jobCommands = map[string]func() *cobra.Command{
	"sample":                 newSampleCmd,
	"entropy":                newEntropyCmd,
	"decompose":              newDecomposeCmd,
	"correlate":              newCorrelateCmd,
	"features":               newFeaturesCmd,
	"stats":                  newStatsCmd,
	"stats merge":            newStatsMergeCmd,
	"compare":                newCompareCmd,
	"is":                     newISCmd,
	"cka":                    newCKACmd,
	"select":                 newSelectCmd,
	"disentangle":            newDisentangleCmd,
	"hallucination run":      newPHRRunCmd,
	"hallucination simulate": newPHRSimulateCmd,
	"mse fit":                newMSEFitCmd,
	"mse estimate":           newMSEEstimateCmd,
	"mse bench":              newMSEBenchCmd,
}

// parentCommands build the commands that group the jobs of two-word
// names ("mse fit" is fit under mse).
var parentCommands = map[string]func() *cobra.Command{
	"hallucination": newHallucinationCmd,
	"mse":           newMSECmd,
}

// extraCommands are the commands that run no job, with their help
// section (tests append their own).
var extraCommands = []extraCommand{
	{"production", newServeCmd},
	{"other", newDemoCmd},
}

type extraCommand struct {
	group string
	build func() *cobra.Command
}

// addCommands adds the commands of job.Commands and extraCommands to
// root, each in its help section.
func addCommands(root *cobra.Command) {
	for i := range helpGroups {
		root.AddGroup(&helpGroups[i])
	}
	parents := map[string]*cobra.Command{}
	for _, jc := range job.Commands {
		build, ok := jobCommands[jc.Name]
		if !ok {
			panic("genlens: no command line for the job " + jc.Name)
		}
		c := build()
		top, _, sub := strings.Cut(jc.Name, " ")
		if !sub {
			c.GroupID = jc.Group
			root.AddCommand(c)
			parents[jc.Name] = c // a job with jobs under it: "stats merge"
			continue
		}
		p, ok := parents[top]
		if !ok {
			p = parentCommands[top]()
			p.GroupID = jc.Group
			parents[top] = p
			root.AddCommand(p)
		}
		p.AddCommand(c)
	}
	for _, e := range extraCommands {
		c := e.build()
		c.GroupID = e.group
		root.AddCommand(c)
	}
	root.SetHelpCommandGroupID("other")
	root.SetCompletionCommandGroupID("other")
}

// version is the module version genlens was built from: the tag for
// `go install genlens/cmd/genlens@vX`, else the VCS revision and date.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	v := bi.Main.Version
	var rev, when string
	dirty := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			when = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if v != "" && v != "(devel)" {
		return v
	}
	if rev == "" {
		return "devel"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "+dirty"
	}
	return "devel " + rev + " " + when
}

// args wraps a cobra positional-argument validator so that its error
// (unknown command, wrong number of arguments), which cobra returns as a
// plain error, is a usage error.
func args(v cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, a []string) error {
		if err := v(cmd, a); err != nil {
			return usageError{err}
		}
		return nil
	}
}
