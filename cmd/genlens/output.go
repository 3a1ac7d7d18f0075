package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/genlens/genlens/internal/atomicfile"
	"github.com/genlens/genlens/internal/console"
	"github.com/genlens/genlens/internal/fields"
	"github.com/genlens/genlens/internal/format/jsonnum"
	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/job/commands"
	"github.com/genlens/genlens/network/inception"
)

// num is job.Num: NaN and ±Inf marshal as JSON null, -0 as 0.
type num = jsonnum.Num

// fmtNum formats a value for the human-readable tables (job.FormatNum).
var fmtNum = job.FormatNum

// prepareOut creates the --out directory. It never removes anything the
// user has there; files genlens writes are replaced atomically.
func prepareOut(dir string) error {
	if dir == "" {
		return nil
	}
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		return badUsage("--out %s is a file; give a directory (it is created if missing)", dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--out %s: %w", dir, err)
	}
	return nil
}

// guardOut refuses, before any work is done, an --out directory where one
// of the files a command writes (names) is one of the user's inputs (the
// input would be replaced by an artifact), or that is itself an input
// folder (of PNG images, whose set the artifacts would change). Inputs
// that do not exist cannot collide. With dir == "" nothing is written and
// nothing is checked.
func guardOut(dir string, names []string, inputs ...string) error {
	// Create it first: a missing or read-only parent must be reported
	// before the computation, not after it; and a directory that did not
	// exist holds no input.
	if dir == "" {
		return nil
	}
	if err := prepareOut(dir); err != nil {
		return err
	}
	if in := sameFileAs(dir, inputs...); in != "" {
		return badUsage("--out %s is the input %s; write the artifacts elsewhere", dir, in)
	}
	for _, n := range names {
		if in := sameFileAs(filepath.Join(dir, n), inputs...); in != "" {
			return badUsage("--out %s: writing %s would overwrite the input %s", dir, n, in)
		}
	}
	return nil
}

// guardOutFile refuses, before any work is done, an output file (flag
// names it in the message) that cannot be written (atomicfile.CheckTarget).
func guardOutFile(flag, path string) error {
	if path == "" {
		return nil
	}
	if err := atomicfile.CheckTarget(path); err != nil {
		return badUsage("%s %v", flag, err)
	}
	return nil
}

// sameFileAs is atomicfile.SameAs.
var sameFileAs = atomicfile.SameAs

// warnings returns the Env warning callback of cmd: a line on its stderr,
// the request fields it names spelled as cmd's flags.
func warnings(cmd *cobra.Command) func(string) {
	return func(msg string) {
		fmt.Fprintln(cmd.ErrOrStderr(), "genlens: warning:", fields.Render(msg, flagOf(cmd)))
	}
}

// models keeps the networks jobs load (Inception's weights) for the rest
// of the process: one job per run, but the tests run many.
var models = job.NewModelCache(job.DefaultModelCacheBytes)

// runJob runs the job function fn on req with the command line's Env:
// inputs from the host, warnings on stderr, and (given labels) a progress
// bar on stderr per stage of the job, as console.Stages draws them.
func runJob[Req, Res any](cmd *cobra.Command, fn func(context.Context, job.Env, Req) (Res, error), req Req, labels ...string) (Res, error) {
	var report func(done, total int)
	if len(labels) > 0 {
		var finish func()
		report, finish = console.Stages(cmd.ErrOrStderr(), labels...)
		defer finish()
	}
	env := job.CLIEnv(report, warnings(cmd))
	env.Models, env.Download = models, console.Download(cmd.ErrOrStderr(),
		"genlens: downloading the Inception weights (once) from "+inception.WeightsURL, strings.TrimSuffix(inception.WeightsFile, ".pth"))
	env.Fetch.Progress = console.Fetch(cmd.ErrOrStderr())
	return fn(cmd.Context(), env, req)
}

// runEmit runs the job of cmd on req and prints the result as every job
// command does. An --out directory out ("" for none) is refused before
// any work when writing one of outputs there would replace one of the
// request's inputs (as commands.All declares them); the result's
// artifacts go under out; the result prints as JSON (--json) or as the
// job's text (job.Command.Text). Labels name the stages' progress bars
// (see console.Stages).
func runEmit(cmd *cobra.Command, req job.Request, out string, outputs, labels []string) error {
	if err := checkOut(cmd, req, out, outputs); err != nil {
		return err
	}
	jc := jobOf(cmd)
	res, err := runJob(cmd, jc.Run, req, labels...)
	if err != nil {
		return err
	}
	var arts []job.Artifact
	if a, ok := res.(interface{ Artifacts() []job.Artifact }); ok {
		arts = a.Artifacts()
	}
	return emit(cmd, out, arts, res, func(w io.Writer) { jc.Text(w, req, res) })
}

// checkOut refuses, before any work, an --out directory out ("" for none)
// where writing one of outputs would replace one of the request's inputs
// (as commands.All declares them) or one of more. The request is checked
// first, so that a bad flag leaves no empty folder behind (the job checks
// it again).
func checkOut(cmd *cobra.Command, r job.Request, out string, outputs []string, more ...string) error {
	if out == "" {
		return nil
	}
	if err := r.Validate(); err != nil {
		return err
	}
	return guardOut(out, outputs, append(requestInputs(cmd, r), more...)...)
}

// requestInputs returns the paths of the input files req names, as the
// entry of cmd's job in commands.All declares them.
func requestInputs(cmd *cobra.Command, req job.Request) []string {
	var paths []string
	for _, in := range jobOf(cmd).Inputs(req) {
		paths = append(paths, in.Path)
	}
	return paths
}

// jobOf returns the entry of commands.All that cmd runs (a loop of its
// own rather than commands.Named: one package fewer on every run).
func jobOf(cmd *cobra.Command) *job.Command {
	for i := range commands.All {
		if commands.All[i].Name == cmd.Annotations[annotationJob] {
			return &commands.All[i]
		}
	}
	return nil
}

// emit writes the artifacts of a result under dir (created if missing;
// nothing when dir is ""), then prints the result on stdout: as one JSON
// document, or as the command's table.
func emit(cmd *cobra.Command, dir string, arts []job.Artifact, res any, table func(io.Writer)) error {
	if dir != "" {
		if err := prepareOut(dir); err != nil {
			return err
		}
		if err := writeArtifacts(dir, arts); err != nil {
			return err
		}
	}
	if jsonFlag(cmd) {
		enc := json.NewEncoder(cmd.OutOrStdout())
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	table(cmd.OutOrStdout())
	return nil
}

// writeArtifacts writes the artifacts of one run under dir as one
// atomicfile.Set: all of them or none, never a mix with an earlier run's.
func writeArtifacts(dir string, as []job.Artifact) error {
	var s atomicfile.Set
	for _, a := range as {
		if err := s.Add(filepath.Join(dir, a.Name), a.Write); err != nil {
			s.Abort()
			return fmt.Errorf("writing %s: %w", filepath.Join(dir, a.Name), err)
		}
	}
	if err := s.Commit(); err != nil {
		return fmt.Errorf("writing the artifacts in %s: %w", dir, err)
	}
	return nil
}

// anyFolder reports whether one of paths is a directory on the host.
func anyFolder(paths ...string) bool {
	for _, p := range paths {
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			return true
		}
	}
	return false
}

// deprecatedAlias registers old as a hidden spelling of the flag name,
// sharing its value, that still works for one release and says on stderr
// what replaces it. (pflag's own Deprecated notice goes to the flag set's
// output, which cobra points at stdout: it would corrupt --json.)
func deprecatedAlias(fl *pflag.FlagSet, old, name string) {
	f := fl.Lookup(name)
	if f == nil {
		panic("deprecatedAlias: no flag --" + name)
	}
	fl.AddFlag(&pflag.Flag{Name: old, Usage: f.Usage, Value: aliasValue{f.Value, old, name}, DefValue: f.DefValue, Hidden: true})
}

// deprecationOut receives the notices of deprecated flags (the command's
// stderr; see newRoot).
var deprecationOut io.Writer = os.Stderr

type aliasValue struct {
	pflag.Value
	old, name string
}

func (v aliasValue) Set(s string) error {
	fmt.Fprintf(deprecationOut, "genlens: warning: --%s is deprecated and will be removed; use --%s\n", v.old, v.name)
	return v.Value.Set(s)
}

// jsonFlag reports whether cmd was given --json, which every job
// command has (addCommands).
func jsonFlag(cmd *cobra.Command) bool {
	v, _ := cmd.Flags().GetBool("json")
	return v
}
