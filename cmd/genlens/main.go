package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/atomicfile"
	"github.com/genlens/genlens/internal/buildinfo"
	"github.com/genlens/genlens/internal/console"
	"github.com/genlens/genlens/internal/fields"
	"github.com/genlens/genlens/job/commands"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/genlens/genlens/internal/tensor/linalg"
	"github.com/genlens/genlens/internal/tensor/membudget"
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
			if wantsJSON(args) {
				writeJSONError(stdout, fmt.Errorf("internal error (please report it): %v", r), nil)
			}
			code = exitFailure
		}
	}()
	stdout, stderr = console.New(stdout, stderr)
	root := newRoot(stdout, stderr)
	root.SetArgs(args)
	var ran *cobra.Command
	err := unknownCommand(root, args)
	if err == nil {
		ran, err = root.ExecuteContextC(ctx)
	}
	if err == nil {
		return exitOK
	}
	if wantsJSON(args) {
		writeJSONError(stdout, err, ran)
	}
	if fault.Classify(err) == fault.KindCanceled && ctx.Err() != nil {
		fmt.Fprintln(stderr, "genlens: interrupted")
		return exitCode(err)
	}
	fmt.Fprintln(stderr, "genlens:", message(err, ran))
	return exitCode(err)
}

// wantsJSON reports whether the command line asks for --json (before a
// "--"): its failures are then a JSON document on stdout too, for the
// scripts that read it. The arguments decide, not the parsed flag, so
// that an error in parsing the flags is JSON as well.
func wantsJSON(args []string) bool {
	want := false
	for _, a := range args {
		switch a {
		case "--":
			return want
		case "--json", "--json=true", "--json=1":
			want = true
		case "--json=false", "--json=0":
			want = false
		}
	}
	return want
}

// jsonError is the document a failure prints on stdout under --json: the
// message as stderr has it, the kind of error (job.Kind: "field" for a
// bad flag, argument or request field, "input" for a bad input file,
// "canceled", "internal") and the request field at fault, null when none
// is (the flag is the field with "_" as "-"; for a bad input file, the
// field that named it or its folder).
type jsonError struct {
	Error string  `json:"error"`
	Kind  string  `json:"kind"`
	Field *string `json:"field"`
}

func writeJSONError(stdout io.Writer, err error, ran *cobra.Command) {
	je := jsonError{Error: message(err, ran), Kind: fault.Classify(err).String()}
	var ue usageError
	if errors.As(err, &ue) {
		je.Kind = fault.KindField.String()
	}
	var fe *fault.FieldError
	var ie *fault.InputError
	switch {
	case errors.As(err, &fe) && fe.Field != "":
		je.Field = &fe.Field
	case errors.As(err, &ie) && strings.HasPrefix(ie.Field, "{") && strings.HasSuffix(ie.Field, "}"):
		f := strings.Trim(ie.Field, "{}")
		je.Field = &f
	case errors.As(err, &ie) && ie.File != "":
		je.Field = inputField(ran, ie.File)
	}
	b, _ := json.Marshal(je)
	fmt.Fprintf(stdout, "%s\n", b)
}

// inputField returns the request field of the flag of ran that names
// file, or a folder file is in, nil for none: the input a bad file came
// from ("fake" for `compare --fake bad.npy`).
func inputField(ran *cobra.Command, file string) *string {
	if ran == nil {
		return nil
	}
	holds := func(v string) bool {
		if v == "" {
			return false
		}
		c := filepath.Clean(v)
		return v == file || c == filepath.Clean(file) || strings.HasPrefix(filepath.Clean(file), c+string(filepath.Separator))
	}
	var field *string
	ran.Flags().VisitAll(func(f *pflag.Flag) {
		if field != nil || !f.Changed {
			return
		}
		vals := []string{f.Value.String()}
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			vals = sv.GetSlice()
		}
		for _, v := range vals {
			if holds(v) {
				name := strings.ReplaceAll(f.Name, "-", "_")
				for k, flag := range ran.Annotations { // a renamed flag's field
					if flag == f.Name && strings.HasPrefix(k, "flag:") {
						name = strings.TrimPrefix(k, "flag:")
					}
				}
				field = &name
				return
			}
		}
	})
	return field
}

// exitCode maps an error to the exit status: the job layer's
// classification (job.Kind.ExitCode), with the command line's own usage
// errors (bad flags, wrong arguments) as exit 2.
func exitCode(err error) int {
	var ue usageError
	if errors.As(err, &ue) {
		return exitBadUse
	}
	return fault.Classify(err).ExitCode()
}

// message renders err for stderr: request fields spelled as the flags of
// the command that ran (cmd, nil when unknown), and a bad flag pointed to
// the command's help. Only an error that is itself a fieldError (or the
// usage error of one) is rendered: a message wrapping one keeps its
// fields when fields.Errorf made it.
func message(err error, cmd *cobra.Command) string {
	inner := err
	if ue, ok := inner.(usageError); ok {
		inner = ue.err
	}
	fe, ok := inner.(fields.Renderer) // fault.FieldError, fault.InputError, fields.Error, ...
	if !ok {
		return err.Error()
	}
	msg := fe.Render(flagOf(cmd))
	// An input error reads "dataio: FILE ...": the library's package name,
	// which means nothing on a command line. Name the command instead, as
	// every other error of a command does ("genlens: entropy: FILE ...").
	if rest, ok := strings.CutPrefix(msg, "dataio: "); ok && cmd != nil && cmd.HasParent() {
		msg = strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ") + ": " + rest
	}
	var bad *fault.FieldError
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
	spellFields(cmd, field, name)
}

// spellFields records that cmd spells each field of pairs (field, flag
// name, field, flag name, ...) as that flag in messages.
func spellFields(cmd *cobra.Command, pairs ...string) {
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	for i := 0; i+1 < len(pairs); i += 2 {
		cmd.Annotations["flag:"+pairs[i]] = pairs[i+1]
	}
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
		Version:       buildinfo.Version(),
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
	root.SetVersionTemplate(buildinfo.Text())
	deprecationOut = stderr
	addBudgetFlag(root)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		err = suggestFlag(c, err)
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

// jobCommands builds the command of each entry of commands.All, by its
// name: the flags (over the request's defaults), help and output of the
// job. The list of commands and their help sections come from
// commands.All; every entry there has a builder here (TestJobCommands).
var jobCommands = map[string]func() *cobra.Command{
	"sample":                 newSampleCmd,
	"entropy":                newEntropyCmd,
	"decompose":              newDecomposeCmd,
	"correlate":              newCorrelateCmd,
	"embed":                  newEmbedCmd,
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
	{"fidelity", newFIDCmd},
	{"production", newServeCmd},
	{"other", newDemoCmd},
	{"other", newVersionCmd},
}

type extraCommand struct {
	group string
	build func() *cobra.Command
}

// addCommands adds the commands of commands.All and extraCommands to
// root, each in its help section.
func addCommands(root *cobra.Command) {
	for i := range helpGroups {
		root.AddGroup(&helpGroups[i])
	}
	parents := map[string]*cobra.Command{}
	for _, jc := range commands.All {
		build, ok := jobCommands[jc.Name]
		if !ok {
			panic("genlens: no command line for the job " + jc.Name)
		}
		c := build()
		c.Annotations = withAnnotation(c.Annotations, annotationJob, jc.Name)
		if c.Flags().Lookup("json") == nil {
			c.Flags().Bool("json", false, "print one JSON document")
		}
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
	for _, c := range root.Commands() {
		setHelp(c)
	}
	root.SetHelpCommandGroupID("other")
	root.SetCompletionCommandGroupID("other")
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, VCS revision and build of genlens (as --version)",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := io.WriteString(cmd.OutOrStdout(), buildinfo.Text())
			return err
		},
	}
}

// annotationJob marks the command of a job (its value is the job's
// name): a job with commands under it ("stats", over "stats merge")
// takes arguments of its own, where a group of commands ("mse") takes
// only the name of one of them.
const annotationJob = "genlens:job"

func withAnnotation(m map[string]string, k, v string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	m[k] = v
	return m
}

// isGroup reports whether c only groups other commands (genlens itself,
// mse, hallucination, completion): a word after it must name one of
// them.
func isGroup(c *cobra.Command) bool {
	_, job := c.Annotations[annotationJob]
	return !c.HasParent() || c.HasSubCommands() && !job
}

// unknownCommand returns the usage error for the first word of args that
// should name a command and names none, with the commands it may be a
// typo of: after genlens, after a group (mse, hallucination) and after
// help. cobra would parse the flags of the group first and report a flag
// of the mistyped command as unknown ("genlens comapre --real" is about
// comapre, not --real). The commands are the tree built from
// commands.All (addCommands), so nothing is listed by hand.
func unknownCommand(root *cobra.Command, args []string) error {
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd(args...)
	c, help := root, false
	for _, a := range args {
		switch {
		case a == "--":
			return nil
		case strings.HasPrefix(a, "-"):
			continue // groups take only boolean flags (--help, --version)
		case a == cobra.ShellCompRequestCmd || a == cobra.ShellCompNoDescRequestCmd:
			return nil // shell completion, added by cobra as it runs
		}
		sub := subcommand(c, a)
		switch {
		case sub == nil:
			return notACommand(c, a)
		case c == root && a == "help" && !help:
			help = true // the words after help name a command
			continue
		}
		c = sub
		if !isGroup(c) {
			return nil // the command's own arguments follow
		}
	}
	return nil
}

// subcommand returns c's command of the name or alias a, nil for none.
func subcommand(c *cobra.Command, a string) *cobra.Command {
	for _, s := range c.Commands() {
		if s.Name() == a || s.HasAlias(a) {
			return s
		}
	}
	return nil
}

// notACommand is the usage error of word a, which names no command
// under c, with the names it may be a typo of.
func notACommand(c *cobra.Command, a string) error {
	c.SuggestionsMinimumDistance = 2
	msg := fmt.Sprintf("unknown command %q for %q", a, c.CommandPath())
	switch s := c.SuggestionsFor(a); len(s) {
	case 0:
	case 1:
		msg += fmt.Sprintf("; did you mean %q?", s[0])
	default:
		msg += fmt.Sprintf("; did you mean one of %s?", quoteJoin(s))
	}
	return badUsage("%s (see '%s --help')", msg, c.CommandPath())
}

func quoteJoin(s []string) string {
	q := make([]string, len(s))
	for i, x := range s {
		q[i] = strconv.Quote(x)
	}
	return strings.Join(q, ", ")
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
