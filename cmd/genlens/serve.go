package main

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"net"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/genlens/genlens/internal/console"
	"github.com/genlens/genlens/internal/service/llmproxy"
	"github.com/genlens/genlens/internal/service/server"
	"github.com/genlens/genlens/internal/signin"
	"github.com/genlens/genlens/internal/store"
	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/llm"
	"github.com/genlens/genlens/network/bert"
)

func newServeCmd() *cobra.Command {
	opts := server.Options{}
	opts.EnsureDefaults() // the flags' defaults
	var addr, db, tokenEnv, llmKeyEnv, nliKeyEnv string
	var maxBodyMB, maxBodiesMB, minFreeDiskMB, modelCacheMB int
	var secretEnvs []string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the monitoring and evaluation service (HTTP API, Prometheus metrics, dashboard)",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Jobs.NoDownloads = "this server fetches no models by name (its operator may start it with --allow-downloads)"
			opts.Jobs.Secret, opts.Jobs.SecretBaseURLs = server.EnvSecrets(secretEnvs), server.SecretBaseURLs(secretEnvs)
			opts.Secrets = server.SecretValues(secretEnvs)
			for _, mb := range []struct {
				v *int64
				n int
			}{{&opts.MaxBody, maxBodyMB}, {&opts.MaxBodiesInFlight, maxBodiesMB}, {&opts.MinFreeDisk, minFreeDiskMB}, {&opts.Jobs.ModelCacheBytes, modelCacheMB}} {
				*mb.v = int64(min(mb.n, math.MaxInt64>>20)) << 20 // Validate bounds them
			}
			env := job.CLIEnv(nil, nil)
			env.Fetch.Progress = console.Fetch(cmd.ErrOrStderr())
			if err := opts.LLM.FetchModels(cmd.Context(), env); err != nil {
				return err
			}
			if err := opts.Validate(); err != nil {
				return usageError{err}
			}
			if err := llmFlags(cmd, &opts.LLM, llmKeyEnv, nliKeyEnv); err != nil {
				return err
			}
			return runServeFunc(cmd.Context(), addr, db, tokenEnv, opts, cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVar(&addr, "addr", "127.0.0.1:8080", "listen address host:port (port 0 picks a free one)")
	f.StringVar(&db, "db", "genlens.db", "SQLite file, or a postgres://... URL")
	f.StringVar(&tokenEnv, "token-env", "", "name of the environment variable holding the bearer token (required beyond loopback)")
	f.StringVar(&opts.Jobs.DataDir, "data-dir", "", "directory of uploaded job inputs; replicas share it (default: DB.data beside a SQLite file, ./genlens-data with Postgres)")
	f.IntVar(&opts.Jobs.Workers, "workers", opts.Jobs.Workers, "jobs this process runs at once")
	f.IntVar(&opts.Jobs.MaxQueued, "max-queued", opts.Jobs.MaxQueued, "jobs that may wait, over all replicas; more are refused with 503 and Retry-After")
	f.DurationVar(&opts.Jobs.MaxRuntime, "max-job-runtime", server.DefaultMaxJobRuntime, "longest a job may run before it is stopped and failed, e.g. 2h (0: no bound)")
	f.DurationVar(&opts.Jobs.RetainJobs, "retain-jobs", 0, "delete finished jobs (succeeded, failed, canceled) and their artifacts this long after they finished, e.g. 720h (0: keep forever; queued and running jobs are never deleted)")
	f.DurationVar(&opts.Jobs.RetainUploads, "retain-uploads", 0, "delete uploads this long after their bytes were last uploaded, once no remaining job names them, e.g. 168h (0: keep forever)")
	f.IntVar(&maxBodyMB, "max-body-mb", int(opts.MaxBody>>20), "largest JSON request body in MiB (a rows batch, a monitor with its model file)")
	f.IntVar(&maxBodiesMB, "max-bodies-mb", 0, "MiB of JSON request bodies read and decoded at once, over all endpoints (JSON decodes into many times its size); at least --max-body-mb (0: twice --max-body-mb)")
	f.DurationVar(&opts.BodyWait, "body-wait", opts.BodyWait, "how long a request waits for room under --max-bodies-mb before it gets 503 with Retry-After")
	f.IntVar(&minFreeDiskMB, "min-free-disk-mb", int(opts.MinFreeDisk>>20), "free MiB under --data-dir below which /healthz (readiness) reports the disk full")
	f.IntVar(&modelCacheMB, "model-cache-mb", int(opts.Jobs.ModelCacheBytes>>20), "MiB of network weights (Inception, ViT, text embedders) kept loaded between jobs; least recently used dropped first; a network larger than this is loaded for its job and not kept")
	f.StringSliceVar(&opts.Jobs.AllowedBaseURLs, "allow-base-url", nil, "an LLM API root jobs may call (hallucination run --backend openai, sample: base_url and embed_base_url); none: no outbound calls")
	f.StringSliceVar(&opts.Jobs.ModelDirs, "model-dir", nil, "a text model's directory (config.json, tokenizer, weights) entropy and sample jobs may run as their embedder (weights) or NLI model (nli_weights), named by its base name; none: no text models")
	f.BoolVar(&opts.Jobs.Downloads, "allow-downloads", false, "let jobs fetch the published models they name (--embedder dinov2-vits14 or e5-small-v2 without weights, a Hugging Face model id org/name as a text model's weights) into this server's caches (torch hub, clip, Hugging Face), or use them from there; off: jobs use uploads and --model-dir folders only")
	f.StringSliceVar(&secretEnvs, "secret-env", nil, "an environment variable jobs may read as an API key (their api_key_env), NAME or NAME=URL to send it only to base URLs under URL; none: no secrets")
	f.StringVar(&opts.LLM.Upstream, "llm-upstream", "", "API root of an OpenAI-compatible server to proxy at /v1/chat/completions (e.g. http://127.0.0.1:8000/v1); none: no proxy")
	f.IntVar(&opts.LLM.Samples, "llm-samples", llmproxy.DefaultSamples, fmt.Sprintf("samples drawn beside each proxied request to score its uncertainty (2 to %d)", llmproxy.MaxSamples))
	f.StringVar(&opts.LLM.Score, "llm-score", llmproxy.DefaultScore, "uncertainty score of the samples: "+strings.Join(llmproxy.Scores(), ", "))
	f.StringVar(&opts.LLM.Embedder, "llm-embedder", "", "score the proxy's samples on their embeddings, computed in process by this sentence embedder: "+strings.Join(bert.Names(), ", ")+" (kernel-entropy: rbf; kle, eigv, degree, ecc: cosine)")
	f.StringVar(&opts.LLM.Prefix, "llm-prefix", "", "with --llm-embedder: query, passage or none, what goes before every sample (e5-small-v2: \"query: \", \"passage: \" or nothing); query by default")
	f.StringVar(&opts.LLM.Weights, "llm-weights", "", "with --llm-embedder: the model's directory (config.json, vocab.txt or tokenizer.json, model.safetensors or pytorch_model.bin)")
	f.StringVar(&opts.LLM.NLI, "llm-nli", "", "se, se-discrete, numsets, label-prob, semantic-density, luq, ccp: the NLI model judging entailment, in process: "+strings.Join(llmproxy.NLIModels(), ", "))
	f.StringVar(&opts.LLM.NLIWeights, "llm-nli-weights", "", "with --llm-nli: the model's directory")
	f.StringVar(&opts.LLM.NLIBaseURL, "llm-nli-base-url", "", "se, se-discrete, numsets, label-prob, semantic-density, luq, ccp: API root of an OpenAI-compatible chat model judging entailment")
	f.StringVar(&opts.LLM.NLIModel, "llm-nli-model", "", "with --llm-nli-base-url: the judge's model name")
	f.StringVar(&nliKeyEnv, "llm-nli-api-key-env", "", "with --llm-nli-base-url: name of the environment variable holding the judge's API key")
	f.IntVar(&opts.LLM.TopLogprobs, "llm-top-logprobs", 0, fmt.Sprintf("mte, cocoa-mte, ccp: alternatives per token asked of the answer (0: %d)", llm.MaxTopLogprobs))
	f.StringVar(&opts.LLM.Similarity, "llm-similarity", "", "cocoa-*, sentence-sar, token-sar, sar: the similarity of texts, rougel or nli (the judge's entailment probability both ways; needs --llm-nli or --llm-nli-base-url) (default rougel)")
	f.StringVar(&opts.LLM.PTruePrompt, "llm-ptrue-prompt", "", "ptrue: a file holding the p(True) question's template ({question}, {samples}, {answer})")
	f.StringVar(&llmKeyEnv, "llm-api-key-env", "", "name of the environment variable holding the upstream's API key (sent upstream only)")
	f.DurationVar(&opts.LLM.Timeout, "llm-timeout", llmproxy.DefaultTimeout, "cut an upstream silent this long (a whole answer, the samples, or a gap in a stream)")
	// The options' fields, as Validate names them, are these flags.
	spellFields(cmd, "max_body", "max-body-mb", "max_bodies", "max-bodies-mb", "min_free_disk", "min-free-disk-mb",
		"model_cache", "model-cache-mb", "max_runtime", "max-job-runtime")
	return cmd
}

// runServeFunc is runServe; tests replace it to see the options the
// flags make.
var runServeFunc = runServe

// llmFlags completes the proxy's options, which Validate checked, from
// serve's --llm-* flags: none of them without --llm-upstream, and the
// upstream's key from the variable keyEnv names (server.New makes the
// client).
func llmFlags(cmd *cobra.Command, o *server.LLMOptions, keyEnv, nliKeyEnv string) error {
	if o.Upstream == "" {
		for _, name := range []string{"llm-api-key-env", "llm-score", "llm-samples", "llm-timeout", "llm-embedder", "llm-weights",
			"llm-nli", "llm-nli-weights", "llm-nli-base-url", "llm-nli-model", "llm-nli-api-key-env", "llm-top-logprobs", "llm-ptrue-prompt", "llm-similarity"} {
			if cmd.Flags().Changed(name) {
				return badUsage("serve: --%s needs --llm-upstream", name)
			}
		}
		*o = server.LLMOptions{}
		return nil
	}
	if keyEnv != "" {
		if o.APIKey = os.Getenv(keyEnv); o.APIKey == "" {
			return badUsage("serve: --llm-api-key-env %s: the environment variable %s is empty or unset", keyEnv, keyEnv)
		}
	}
	if nliKeyEnv != "" {
		if o.NLIBaseURL == "" {
			return badUsage("serve: --llm-nli-api-key-env needs --llm-nli-base-url")
		}
		if o.NLIAPIKey = os.Getenv(nliKeyEnv); o.NLIAPIKey == "" {
			return badUsage("serve: --llm-nli-api-key-env %s: the environment variable %s is empty or unset", nliKeyEnv, nliKeyEnv)
		}
	}
	return nil
}

// runServe serves opts (all but its Store, Token and Logger, which it
// sets) on addr until ctx is done.
func runServe(ctx context.Context, addr, db, tokenEnv string, opts server.Options, stderr interface{ Write([]byte) (int, error) }) error {
	jobs, llmOpts := &opts.Jobs, opts.LLM
	var token string
	if tokenEnv != "" {
		token = os.Getenv(tokenEnv)
		if token == "" {
			return badUsage("serve: --token-env %s: the environment variable %s is empty or unset", tokenEnv, tokenEnv)
		}
		if err := signin.CheckToken(token); err != nil {
			return badUsage("serve: --token-env %s: %v", tokenEnv, err)
		}
	}
	if token == "" && !server.IsLoopback(addr) {
		return badUsage("serve: --addr %s listens beyond this machine; set a bearer token with --token-env NAME", addr)
	}
	if jobs.DataDir == "" {
		jobs.DataDir = "genlens-data"
		if !store.IsPostgresDSN(db) {
			jobs.DataDir = db + ".data"
		}
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	st, err := store.Open(ctx, db)
	if err != nil {
		return err
	}
	defer st.Close()
	opts.Store, opts.Token, opts.Logger = st, token, log
	srv, err := server.New(ctx, opts)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		srv.Close(context.Background())
		return badUsage("serve: --addr %s: %v", addr, err)
	}
	where := db
	if store.IsPostgresDSN(db) {
		where = "postgres"
	}
	log.Info("genlens serve listening", "url", "http://"+ln.Addr().String(), "store", st.Backend(), "db", where, "auth", token != "")
	if llmOpts.Upstream != "" {
		log.Info("LLM proxy", "url", "http://"+ln.Addr().String()+"/v1/chat/completions", "samples", llmOpts.Samples, "score", llmOpts.Score)
	}
	return srv.Serve(ctx, ln)
}
