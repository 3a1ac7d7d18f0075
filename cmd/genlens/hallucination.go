package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/genlens/genlens/internal/service/server"
	"github.com/genlens/genlens/internal/testkit/llmtest"
	"github.com/genlens/genlens/job/icljob"
)

func newHallucinationCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hallucination",
		Short: "Posterior hallucination rate of in-context learning (Jesson et al., NeurIPS 2024)",
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, a []string) error {
			if len(a) > 0 {
				return badUsage("hallucination: unknown command %q (see 'genlens hallucination --help')", a[0])
			}
			return cmd.Help()
		},
	}
	// run and simulate are added from commands.All (see addCommands).
	cmd.AddCommand(newPHRServeCmd())
	return cmd
}

// registerNamedCategorical registers the flags of the categorical model
// with named inputs and labels of serve-model (run's are its request's).
func registerNamedCategorical(fl *pflag.FlagSet, inputs, labels *string, alpha *float64) {
	fl.StringVar(inputs, "inputs", *inputs, "categorical model: comma-separated input names (one Dirichlet per input)")
	fl.StringVar(labels, "labels", *labels, "categorical model: comma-separated label names")
	fl.Float64Var(alpha, "alpha", *alpha, "categorical model: symmetric Dirichlet prior concentration")
}

// ---------------------------------------------------------------- simulate

func newPHRSimulateCmd() *cobra.Command {
	f := icljob.NewHallucinationSimulateRequest()
	var out string
	cmd := &cobra.Command{
		Use:   "simulate [--backend linear|categorical] [flags]",
		Short: "PHR estimate against the exact PHR and the true hallucination rate on exact Bayesian models",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runEmit(cmd, &f, out, nil, []string{"simulate"})
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.Model, "backend", f.Model, "exact model: linear or categorical (as run's --backend)")
	renamedFlag(cmd, "model", "backend")
	fl.IntVar(&f.M, "m", f.M, "imagined datasets M per estimate")
	fl.IntVar(&f.K, "k", f.K, "responses K per THR estimate")
	renamedFlag(cmd, "M", "m")
	renamedFlag(cmd, "K", "k")
	fl.StringVar(&out, "out", "", "directory for simulate.csv, tasks.csv, simulate.json, rates_vs_n.png, phr_vs_thr.png")
	fl.IntVar(&f.Groups, "input-count", f.Groups, "categorical model: number of inputs (one Dirichlet each; run's --inputs names them)")
	fl.IntVar(&f.Labels, "label-count", f.Labels, "categorical model: number of labels (run's --labels names them)")
	renamedFlag(cmd, "groups", "input-count")
	renamedFlag(cmd, "labels", "label-count")
	bindFlags(cmd, &f)
	return cmd
}

// --------------------------------------------------------------------- run

func newPHRRunCmd() *cobra.Command {
	f := icljob.NewHallucinationRunRequest()
	var out string
	cmd := &cobra.Command{
		Use:   "run --backend openai|linear|categorical --context CTX.jsonl --queries Q.jsonl [flags]",
		Short: "PHR, total, aleatoric and epistemic uncertainty per query for your in-context task",
		Args:  args(cobra.NoArgs),
		RunE:  func(cmd *cobra.Command, _ []string) error { return runPHRRun(cmd, f, out) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.Model, "model-name", "", "openai: the server's model name (as serve-model's --model-name)")
	renamedFlag(cmd, "model", "model-name")
	fl.IntVar(&f.M, "m", 0, "imagined datasets M per query (default 10 openai, 40 exact models)")
	fl.IntVar(&f.K, "k", 0, "responses K per THR estimate (default 50 openai, 2000 exact models)")
	renamedFlag(cmd, "M", "m")
	renamedFlag(cmd, "K", "k")
	fl.StringVar(&out, "out", "", "directory for items.csv and run.json")
	bindFlags(cmd, &f)
	return cmd
}

// phrRunOutputs are the files 'hallucination run --out' writes.
var phrRunOutputs = []string{"items.csv", "run.json"}

func runPHRRun(cmd *cobra.Command, f icljob.HallucinationRunRequest, out string) error {
	if err := checkOut(cmd, &f, out, phrRunOutputs); err != nil {
		return err
	}
	res, err := runJob(cmd, icljob.HallucinationRun, f, "queries")
	if err != nil && res != nil && res.Incomplete && out != "" {
		// Interrupted: keep what finished in --out, then report the
		// interruption.
		if werr := writeArtifacts(out, res.Artifacts()); werr != nil {
			return werr
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "genlens: wrote the %d finished queries to %s\n", len(res.Items), out)
		return err
	}
	if err != nil {
		return err
	}
	return emit(cmd, out, res.Artifacts(), res, func(w io.Writer) { jobOf(cmd).Text(w, &f, res) })
}

// ------------------------------------------------------------- serve-model

// phrModelFlags describe the served model: the categorical classifier
// with named inputs and labels (icljob.NamedCategorical).
type phrModelFlags struct {
	inputNames, labelNames string
	alpha                  float64
}

type phrServeFlags struct {
	addr, modelName, apiKeyEnv string
	latency                    time.Duration
	mf                         phrModelFlags
}

func newPHRServeCmd() *cobra.Command {
	d := icljob.NewHallucinationRunRequest()
	f := phrServeFlags{mf: phrModelFlags{inputNames: d.Inputs, labelNames: d.Labels, alpha: d.Alpha}}
	cmd := &cobra.Command{
		Use:   "serve-model [--addr 127.0.0.1:PORT] [flags]",
		Short: "Serve an exact Bayesian classifier through the OpenAI completions API (for trying the openai backend)",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runPHRServe(cmd.Context(), cmd.OutOrStdout(), f, nil)
		},
	}
	cmd.Flags().StringVar(&f.addr, "addr", "127.0.0.1:8000", "loopback address to listen on")
	cmd.Flags().StringVar(&f.modelName, "model-name", "genlens-categorical", "model name clients must send")
	cmd.Flags().StringVar(&f.apiKeyEnv, "api-key-env", "", "if set, require the API key held by this environment variable")
	cmd.Flags().DurationVar(&f.latency, "latency", 0, "simulated compute time per request")
	registerNamedCategorical(cmd.Flags(), &f.mf.inputNames, &f.mf.labelNames, &f.mf.alpha)
	return cmd
}

// runPHRServe serves until ctx ends; ready, if not nil, receives the
// listening address.
func runPHRServe(ctx context.Context, w io.Writer, f phrServeFlags, ready func(addr string)) error {
	if _, _, err := net.SplitHostPort(f.addr); err != nil {
		return badUsage("--addr %q: want HOST:PORT", f.addr)
	}
	if !server.IsLoopback(f.addr) {
		return badUsage("--addr %q: serve-model listens on loopback addresses only (127.0.0.1, ::1, localhost)", f.addr)
	}
	if f.latency < 0 {
		return badUsage("--latency %v: want a non-negative duration", f.latency)
	}
	m, inputs, labels, err := icljob.NamedCategorical(f.mf.inputNames, f.mf.labelNames, f.mf.alpha)
	if err != nil {
		return err
	}
	key := ""
	if f.apiKeyEnv != "" {
		if key = os.Getenv(f.apiKeyEnv); key == "" {
			return badUsage("--api-key-env %s: the variable is empty", f.apiKeyEnv)
		}
	}
	h, err := llmtest.NewHandler(llmtest.Config{Model: m, Inputs: inputs, Labels: labels, ModelName: f.modelName, APIKey: key, Latency: f.latency})
	if err != nil {
		return usageError{err}
	}
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		var addrErr *net.AddrError
		if errors.As(err, &addrErr) {
			return badUsage("--addr %s: %v", f.addr, addrErr)
		}
		return err
	}
	fmt.Fprintf(w, "serving model %q (inputs %s; labels %s; alpha %v) at http://%s/v1 (Ctrl-C to stop)\n",
		f.modelName, strings.Join(inputs, ","), strings.Join(labels, ","), f.mf.alpha, ln.Addr())
	if ready != nil {
		ready(ln.Addr().String())
	}
	if err := llmtest.Serve(ctx, ln, h); err != nil {
		return err
	}
	fmt.Fprintf(w, "served %d completion requests\n", h.Requests())
	return nil
}

// -------------------------------------------------------------------- demo
