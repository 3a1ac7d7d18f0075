package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"genlens/job/llmjob"
	"genlens/llm/llmtest"
	"genlens/server"
)

func newHallucinationCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hallucination",
		Short: "Posterior hallucination rate of in-context learning (Jesson et al., NeurIPS 2024)",
		Long: `hallucination estimates how often a model answering a query from in-context
examples will hallucinate: the posterior hallucination rate (PHR) of Jesson
et al. (2024), with the total, aleatoric and epistemic uncertainty, using only
the model's own sampling and log-probabilities.

  run          PHR per query for your context, through an OpenAI-compatible
               completions server that echoes prompt log-probabilities
               (vLLM; see --help of run) or an
               exact Bayesian model
  simulate     PHR against the exact answer on exact Bayesian models
  serve-model  an exact Bayesian classifier behind the completions API, to
               try the openai backend without a language model`,
		Args: cobra.ArbitraryArgs,
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

// registerLinear registers the flags of the exact linear model.
func registerLinear(fl *pflag.FlagSet, features *string, noise, priorScale *float64) {
	fl.StringVar(features, "features", *features, "linear model: poly:DEG or relu:WIDTH:SEED features of x ~ U[-2, 2]")
	fl.Float64Var(noise, "noise", *noise, "linear model: noise standard deviation σ")
	fl.Float64Var(priorScale, "prior-scale", *priorScale, "linear model: prior w ~ N(0, S² I) with this S")
}

// registerNamedCategorical registers the flags of the categorical model
// with named inputs and labels (run and serve-model).
func registerNamedCategorical(fl *pflag.FlagSet, inputs, labels *string, alpha *float64) {
	fl.StringVar(inputs, "inputs", *inputs, "categorical model: comma-separated input names (one Dirichlet per input)")
	fl.StringVar(labels, "labels", *labels, "categorical model: comma-separated label names")
	fl.Float64Var(alpha, "alpha", *alpha, "categorical model: symmetric Dirichlet prior concentration")
}

// ---------------------------------------------------------------- simulate

func newPHRSimulateCmd() *cobra.Command {
	f := llmjob.NewHallucinationSimulateRequest()
	var out string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "simulate [--backend linear|categorical] [flags]",
		Short: "PHR estimate against the exact PHR and the true hallucination rate on exact Bayesian models",
		Long: `simulate draws tasks from an exact Bayesian model (a mechanism f from the prior,
a context of n examples from f, a query x) and compares, for each context size
n, the PHR estimated by Algorithm 1 from the model's samples and
log-probabilities alone with the exact PHR (Definition 4, from the exact
posterior) and with the true hallucination rate of the model's answers given
f (THR, Definition 3), as in the paper's Figure 3.

Models: linear (Bayesian linear regression, --features poly:3 is the paper's
Appendix G.1.2 task; relu:WIDTH:SEED a random ReLU network with a learnable
last layer) and categorical (Dirichlet-categorical in-context classifier).

Rows: phr_mean, thr_mean, exact_phr_mean (means over tasks), mae_phr_vs_exact,
mae_phr_vs_thr (mean absolute differences) and r2_phr_vs_thr (R² of the PHR
as a linear predictor of the THR: squared Pearson correlation).

Algorithm 1 estimates the PHR truncated at N = n + extra examples, which sits
a little below the exact PHR when the imagined examples leave the task
uncertain (rich features, many input groups): this shows in
mae_phr_vs_exact.`,
		Example: `  genlens hallucination simulate --json
  genlens hallucination simulate --backend categorical --ns 2,8,32 --tasks 100 --out sim/`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return runPHRSimulate(cmd, f, out, asJSON) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.Model, "backend", f.Model, "exact model: linear or categorical (as run's --backend)")
	renamedFlag(cmd, "model", "backend")
	fl.StringVar(&f.Ns, "ns", f.Ns, "context sizes n, comma-separated")
	fl.IntVar(&f.Tasks, "tasks", f.Tasks, "tasks (mechanism, context, query) per context size")
	fl.Float64Var(&f.Eps, "eps", f.Eps, "tolerance ε: responses outside the (1-ε)-likely set are hallucinations")
	fl.IntVar(&f.M, "m", f.M, "imagined datasets M per estimate")
	fl.IntVar(&f.K, "k", f.K, "responses K per THR estimate")
	renamedFlag(cmd, "M", "m")
	renamedFlag(cmd, "K", "k")
	fl.IntVar(&f.Extra, "extra", f.Extra, "imagined examples per dataset (N - n)")
	fl.Uint64Var(&f.Seed, "seed", f.Seed, "random seed")
	fl.IntVar(&f.Concurrency, "concurrency", f.Concurrency, "tasks estimated at once")
	fl.StringVar(&out, "out", "", "directory for simulate.csv, tasks.csv, simulate.json, rates_vs_n.png, phr_vs_thr.png")
	fl.BoolVar(&asJSON, "json", false, "print one JSON document")
	registerLinear(fl, &f.Features, &f.Noise, &f.PriorScale)
	fl.IntVar(&f.Groups, "input-count", f.Groups, "categorical model: number of inputs (one Dirichlet each; run's --inputs names them)")
	fl.IntVar(&f.Labels, "label-count", f.Labels, "categorical model: number of labels (run's --labels names them)")
	renamedFlag(cmd, "groups", "input-count")
	renamedFlag(cmd, "labels", "label-count")
	fl.Float64Var(&f.Alpha, "alpha", f.Alpha, "categorical model: symmetric Dirichlet prior concentration")
	return cmd
}

func runPHRSimulate(cmd *cobra.Command, f llmjob.HallucinationSimulateRequest, out string, asJSON bool) error {
	if err := checkRun(&f, out, nil); err != nil {
		return err
	}
	res, err := runJob(cmd, llmjob.HallucinationSimulate, f, "simulate")
	if err != nil {
		return err
	}
	return emit(cmd, out, res.Artifacts(), asJSON, res, func(w io.Writer) { printPHRSim(w, res) })
}

func printPHRSim(w io.Writer, res *llmjob.HallucinationSimulateResult) {
	s := res.Settings
	fmt.Fprintf(w, "model %v", s.Model)
	if s.Model == "linear" {
		fmt.Fprintf(w, ", features %v, noise %v, prior_scale %v", s.Features, s.Noise, s.PriorScale)
	} else {
		fmt.Fprintf(w, ", groups %v, labels %v, alpha %v", s.Groups, s.Labels, s.Alpha)
	}
	fmt.Fprintf(w, "; %v tasks per n; eps %v, M %v, K %v, N-n %v\n\n", s.Tasks, s.Eps, s.M, s.K, s.Extra)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "n\tPHR (Alg. 1)\texact PHR\tTHR\tMAE vs exact\tMAE vs THR\tR² vs THR\t")
	for _, r := range res.Rows {
		r2 := "-"
		if v := float64(r.R2PHRTHR); !math.IsNaN(v) {
			r2 = fmt.Sprintf("%.3f", v)
		}
		fmt.Fprintf(tw, "%d\t%.4f\t%.4f\t%.4f\t%.4f\t%.4f\t%s\t\n", r.N, float64(r.PHRMean), float64(r.ExactPHRMean), float64(r.THRMean),
			float64(r.MAEPHRExact), float64(r.MAEPHRTHR), r2)
	}
	tw.Flush()
}

// --------------------------------------------------------------------- run

func newPHRRunCmd() *cobra.Command {
	f := llmjob.NewHallucinationRunRequest()
	var out string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "run --backend openai|linear|categorical --context CTX.jsonl --queries Q.jsonl [flags]",
		Short: "PHR, total, aleatoric and epistemic uncertainty per query for your in-context task",
		Long: `run estimates, for every query, the posterior hallucination rate of the model
answering it given the context (Algorithm 1 of the paper), and the total,
aleatoric and epistemic uncertainty of Appendix D, from the model's own
samples and log-probabilities.

Context rows: {"x": ..., "y": ...}, the in-context examples in order.
Query rows: {"id": ..., "x": ...}, optionally with the true "y"; then
error_rate is the fraction of the model's sampled answers that differ from it
(Eq. 9).

Backends:
  openai       an OpenAI-compatible /completions endpoint that returns
               log-probabilities of the prompt with echo (vLLM does;
               llama.cpp server and Ollama do not, at the time of writing,
               and are refused with a clear error); prompt
               "Input: <x>\nLabel: <y>\n\n" per example, "Input: <x>\nLabel:"
               for the query. The API key is read from the variable named by
               --api-key-env. x and y are text.
  linear       exact Bayesian linear regression (--features, --noise,
               --prior-scale); x and y are numbers; adds exact_phr per item.
  categorical  the exact Dirichlet-categorical classifier that serve-model
               serves (--inputs, --labels, --alpha); adds exact_phr. With the
               same flags and seed it gives the same numbers as the openai
               backend pointed at serve-model.

--m, --k and --extra default to the paper's settings: 10, 50, 5 for openai;
40, 2000, 100 for the exact models.`,
		Example: `  genlens hallucination serve-model --addr 127.0.0.1:8000 &
  genlens hallucination run --backend openai --base-url http://127.0.0.1:8000/v1 \
      --model-name genlens-categorical --context ctx.jsonl --queries q.jsonl --json
  genlens hallucination run --backend linear --features poly:3 --noise 0.1 \
      --prior-scale 1 --context points.jsonl --queries xs.jsonl`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return runPHRRun(cmd, f, out, asJSON) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.Backend, "backend", f.Backend, "openai, linear or categorical")
	fl.StringVar(&f.BaseURL, "base-url", "", "openai: API root, e.g. http://127.0.0.1:8000/v1")
	fl.StringVar(&f.Model, "model-name", "", "openai: the server's model name (as serve-model's --model-name)")
	renamedFlag(cmd, "model", "model-name")
	fl.StringVar(&f.APIKeyEnv, "api-key-env", f.APIKeyEnv, "openai: environment variable holding the API key (may be unset)")
	fl.StringVar(&f.Context, "context", "", "context examples (.jsonl rows {\"x\", \"y\"})")
	fl.StringVar(&f.Queries, "queries", "", "queries (.jsonl rows {\"id\", \"x\"[, \"y\"]})")
	fl.Float64Var(&f.Eps, "eps", f.Eps, "tolerance ε (the paper used 0.75 to compare with the error rate)")
	fl.IntVar(&f.M, "m", 0, "imagined datasets M per query (default 10 openai, 40 exact models)")
	fl.IntVar(&f.K, "k", 0, "responses K per THR estimate (default 50 openai, 2000 exact models)")
	renamedFlag(cmd, "M", "m")
	renamedFlag(cmd, "K", "k")
	fl.IntVar(&f.Extra, "extra", 0, "imagined examples N - n (default 5 openai, 100 exact models)")
	fl.IntVar(&f.Concurrency, "concurrency", f.Concurrency, "requests in flight (openai) and queries at once")
	fl.Uint64Var(&f.Seed, "seed", f.Seed, "random seed (sent to the server as per-request seeds)")
	fl.DurationVar(&f.Timeout, "timeout", f.Timeout, "openai: per-request timeout")
	fl.IntVar(&f.Retries, "retries", f.Retries, "openai: retries on 429, 5xx, timeouts and connection errors")
	fl.IntVar(&f.MaxTokens, "max-tokens", f.MaxTokens, "openai: tokens generated per answer (one line)")
	fl.Float64Var(&f.PairTopP, "pair-top-p", f.PairTopP, "openai: top_p when imagining examples (the paper used 0.9)")
	fl.BoolVar(&f.NoSeed, "no-seed", false, "openai: do not send per-request seeds")
	fl.StringVar(&out, "out", "", "directory for items.csv and run.json")
	fl.BoolVar(&asJSON, "json", false, "print one JSON document")
	registerLinear(fl, &f.Features, &f.Noise, &f.PriorScale)
	registerNamedCategorical(fl, &f.Inputs, &f.Labels, &f.Alpha)
	return cmd
}

// phrRunOutputs are the files 'hallucination run --out' writes.
var phrRunOutputs = []string{"items.csv", "run.json"}

func runPHRRun(cmd *cobra.Command, f llmjob.HallucinationRunRequest, out string, asJSON bool) error {
	if err := checkRun(&f, out, phrRunOutputs, f.Context, f.Queries); err != nil {
		return err
	}
	res, err := runJob(cmd, llmjob.HallucinationRun, f, "queries")
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
	return emit(cmd, out, res.Artifacts(), asJSON, res, func(w io.Writer) { printPHRRun(w, res) })
}

func printPHRRun(w io.Writer, res *llmjob.HallucinationRunResult) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	exact := len(res.Items) > 0 && res.Items[0].ExactPHR != nil
	header := "id\tphr\t± se\ttotal\taleatoric\tepistemic\terror_rate\t"
	if exact {
		header += "exact_phr\t"
	}
	fmt.Fprintln(tw, header)
	for _, it := range res.Items {
		if it.Error != "" {
			fmt.Fprintf(tw, "%s\tfailed: %s\t\n", it.ID, it.Error)
			continue
		}
		fmt.Fprintf(tw, "%s\t%.4f\t%.4f\t%s\t%s\t%s\t%s\t", it.ID, float64(it.PHR), float64(it.PHRStdErr), fmtNum(float64(it.Total)),
			fmtNum(float64(it.Aleatoric)), fmtNum(float64(it.Epistemic)), fmtNum(float64(it.ErrorRate)))
		if exact {
			fmt.Fprintf(tw, "%.4f\t", float64(*it.ExactPHR))
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	s := res.Settings
	fmt.Fprintf(w, "\nbackend %v; eps %v, M %v, K %v, N-n %v; %v context examples\n", s.Backend, s.Eps, s.M, s.K, s.Extra, s.ContextExamples)
	if st := res.Stats; st != nil {
		fmt.Fprintf(w, "%d requests (%d retries) in %.1f s: %.1f requests/s\n", st.Requests, st.Retries, st.Seconds, st.RequestsPerSec)
	}
}

// ------------------------------------------------------------- serve-model

// phrModelFlags describe the served model: the categorical classifier
// with named inputs and labels (llmjob.NamedCategorical).
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
	d := llmjob.NewHallucinationRunRequest()
	f := phrServeFlags{mf: phrModelFlags{inputNames: d.Inputs, labelNames: d.Labels, alpha: d.Alpha}}
	cmd := &cobra.Command{
		Use:   "serve-model [--addr 127.0.0.1:PORT] [flags]",
		Short: "Serve an exact Bayesian classifier through the OpenAI completions API (for trying the openai backend)",
		Long: `serve-model serves the Dirichlet-categorical in-context classifier (one
Dirichlet(alpha) label distribution per input, inputs uniform) through the
OpenAI-compatible completions API at http://ADDR/v1/completions: it reads
prompts in the format "Input: <x>\nLabel: <y>\n\n", generates imagined
examples and labels by sampling from the exact posterior predictive, and
returns true token log-probabilities (logprobs, echo, seed are honoured).

Point 'genlens hallucination run --backend openai' at it and compare with
'run --backend categorical' and the same flags: the numbers agree exactly.
It also answers /v1/chat/completions (the messages' contents read as one
prompt) and /v1/embeddings (model genlens-embedding), so 'genlens sample'
can be tried without a language model. It listens on loopback addresses only
and runs until interrupted.`,
		Example: `  genlens hallucination serve-model --addr 127.0.0.1:8000 --inputs cat,dog --labels yes,no`,
		Args:    args(cobra.NoArgs),
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
	m, inputs, labels, err := llmjob.NamedCategorical(f.mf.inputNames, f.mf.labelNames, f.mf.alpha)
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
