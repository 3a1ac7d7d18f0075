package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"genlens/job"
	"genlens/llm"
	"genlens/llmproxy"
	"genlens/server"
	"genlens/store"
)

func newServeCmd() *cobra.Command {
	var addr, db, tokenEnv, dataDir string
	var workers, maxBodyMB, maxQueued int
	var maxBodiesMB, minFreeDiskMB, modelCacheMB int
	var maxRuntime, retainJobs, retainUploads, bodyWait time.Duration
	var allowURLs, secretEnvs []string
	var lf llmFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the monitoring and evaluation service (HTTP API, Prometheus metrics, dashboard)",
		Long: `serve runs genlens as a service: monitors that estimate a deployed regression
model's MSE chunk by chunk as rows arrive (the check model of 'genlens mse fit';
"A One-Step MSE Estimation of Models in Production", 2024), jobs for every
command, online generator selection (Hu, Leung & Farnia, "An Optimism-based
Approach to Online Evaluation of Generative Models", 2024), Prometheus metrics
at /metrics and a dashboard at /.

Everything is stored in one database: an embedded SQLite file (default
./genlens.db) or Postgres (--db postgres://...), which several replicas may
share. A listening address beyond this machine needs a bearer token, read from
the environment variable that --token-env names. SIGINT or SIGTERM shut the
server down gracefully.

With --llm-upstream, serve is also an OpenAI-compatible proxy in front of that
server: POST /v1/chat/completions goes upstream as it is and its answer comes
back unchanged but for one added key, "genlens": {"uncertainty", "score",
"samples"}, and the header X-Genlens-Uncertainty. Beside each request the
proxy draws --llm-samples answers to the same messages at temperature 1 and
scores them: the predictive kernel entropy of the samples (Gruber & Buettner,
"A Bias-Variance-Covariance Decomposition of Kernel Scores for Generative
Models", ICML 2024) with the contiguous-subsequence kernel, as 'genlens
entropy' computes it by default. Streams pass through event by event; their
score goes to the store and /metrics only. Every request is listed at
GET /api/v1/llm/requests and on the dashboard. Callers authenticate with the
server's token (as their API key); the upstream's own key is read from the
variable --llm-api-key-env names and never leaves the server.`,
		Example: `  genlens serve
  GENLENS_TOKEN=$(openssl rand -hex 16) genlens serve --addr :8080 --token-env GENLENS_TOKEN \
      --db postgres://genlens@db.internal/genlens
  OPENAI_API_KEY=... genlens serve --llm-upstream http://127.0.0.1:8000/v1 --llm-api-key-env OPENAI_API_KEY`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			jobs := server.JobOptions{DataDir: dataDir, Workers: workers, AllowedBaseURLs: allowURLs, Secret: secretLookup(secretEnvs),
				MaxQueued: maxQueued, MaxRuntime: maxRuntime, RetainJobs: retainJobs, RetainUploads: retainUploads,
				ModelCacheBytes: int64(modelCacheMB) << 20}
			if maxBodyMB < 1 {
				return badUsage("serve: --max-body-mb %d must be at least 1", maxBodyMB)
			}
			if err := checkMemoryFlags(maxBodyMB, maxBodiesMB, minFreeDiskMB, modelCacheMB, bodyWait); err != nil {
				return err
			}
			if maxQueued < 1 || maxQueued > 1_000_000 {
				return badUsage("serve: --max-queued %d must be in [1, 1000000]", maxQueued)
			}
			if maxRuntime < 0 {
				return badUsage("serve: --max-job-runtime %v must not be negative (0: no bound)", maxRuntime)
			}
			if retainJobs < 0 {
				return badUsage("serve: --retain-jobs %v must not be negative (0: keep forever)", retainJobs)
			}
			if retainUploads < 0 {
				return badUsage("serve: --retain-uploads %v must not be negative (0: keep forever)", retainUploads)
			}
			llmOpts, err := lf.options()
			if err != nil {
				return err
			}
			opts := server.Options{MaxBody: int64(maxBodyMB) << 20, MaxBodiesInFlight: int64(maxBodiesMB) << 20, BodyWait: bodyWait,
				MinFreeDisk: int64(minFreeDiskMB) << 20, Jobs: jobs, LLM: llmOpts}
			return runServeFunc(cmd.Context(), addr, db, tokenEnv, opts, cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVar(&addr, "addr", "127.0.0.1:8080", "listen address host:port (port 0 picks a free one)")
	f.StringVar(&db, "db", "genlens.db", "SQLite file, or a postgres://... URL")
	f.StringVar(&tokenEnv, "token-env", "", "name of the environment variable holding the bearer token (required beyond loopback)")
	f.StringVar(&dataDir, "data-dir", "", "directory of uploaded job inputs; replicas share it (default: DB.data beside a SQLite file, ./genlens-data with Postgres)")
	f.IntVar(&workers, "workers", 1, "jobs this process runs at once")
	f.IntVar(&maxQueued, "max-queued", 1000, "jobs that may wait, over all replicas; more are refused with 503 and Retry-After")
	f.DurationVar(&maxRuntime, "max-job-runtime", 0, "longest a job may run before it is stopped and failed, e.g. 2h (0: no bound)")
	f.DurationVar(&retainJobs, "retain-jobs", 0, "delete finished jobs (succeeded, failed, canceled) and their artifacts this long after they finished, e.g. 720h (0: keep forever; queued and running jobs are never deleted)")
	f.DurationVar(&retainUploads, "retain-uploads", 0, "delete uploads this long after their bytes were last uploaded, once no remaining job names them, e.g. 168h (0: keep forever)")
	f.IntVar(&maxBodyMB, "max-body-mb", int(server.DefaultMaxBody>>20), "largest JSON request body in MiB (a rows batch, a monitor with its model file)")
	f.IntVar(&maxBodiesMB, "max-bodies-mb", 0, "MiB of JSON request bodies read and decoded at once, over all endpoints (JSON decodes into many times its size); at least --max-body-mb (0: twice --max-body-mb)")
	f.DurationVar(&bodyWait, "body-wait", server.DefaultBodyWait, "how long a request waits for room under --max-bodies-mb before it gets 503 with Retry-After")
	f.IntVar(&minFreeDiskMB, "min-free-disk-mb", int(server.DefaultMinFreeDisk>>20), "free MiB under --data-dir below which /healthz (readiness) reports the disk full")
	f.IntVar(&modelCacheMB, "model-cache-mb", int(job.DefaultModelCacheBytes>>20), "MiB of network weights (Inception, ViT) kept loaded between jobs; least recently used dropped first; a network larger than this is loaded for its job and not kept")
	f.StringSliceVar(&allowURLs, "allow-base-url", nil, "an LLM API root jobs may call (hallucination run --backend openai, sample: base_url and embed_base_url); none: no outbound calls")
	f.StringSliceVar(&secretEnvs, "secret-env", nil, "an environment variable jobs may read as an API key (their api_key_env); none: no secrets")
	f.StringVar(&lf.upstream, "llm-upstream", "", "API root of an OpenAI-compatible server to proxy at /v1/chat/completions (e.g. http://127.0.0.1:8000/v1); none: no proxy")
	f.IntVar(&lf.samples, "llm-samples", llmproxy.DefaultSamples, fmt.Sprintf("samples drawn beside each proxied request to score its uncertainty (2 to %d)", llmproxy.MaxSamples))
	f.StringVar(&lf.score, "llm-score", llmproxy.DefaultScore, "uncertainty score of the samples: "+strings.Join(llmproxy.Scores(), ", "))
	f.StringVar(&lf.keyEnv, "llm-api-key-env", "", "name of the environment variable holding the upstream's API key (sent upstream only)")
	f.DurationVar(&lf.timeout, "llm-timeout", llmproxy.DefaultTimeout, "cut an upstream silent this long (a whole answer, the samples, or a gap in a stream)")
	return cmd
}

// maxFlagMB bounds serve's MiB flags (1 TiB), far above real use and far
// below an int64 of bytes.
const maxFlagMB = 1 << 20

// checkMemoryFlags checks serve's bounds of memory and disk.
func checkMemoryFlags(maxBodyMB, maxBodiesMB, minFreeDiskMB, modelCacheMB int, bodyWait time.Duration) error {
	switch {
	case maxBodiesMB != 0 && (maxBodiesMB < maxBodyMB || maxBodiesMB > maxFlagMB):
		return badUsage("serve: --max-bodies-mb %d must be 0 (twice --max-body-mb) or in [--max-body-mb %d, %d]: one body of the largest size must fit", maxBodiesMB, maxBodyMB, maxFlagMB)
	case bodyWait <= 0:
		return badUsage("serve: --body-wait %v must be positive", bodyWait)
	case minFreeDiskMB < 1 || minFreeDiskMB > maxFlagMB:
		return badUsage("serve: --min-free-disk-mb %d must be in [1, %d]", minFreeDiskMB, maxFlagMB)
	case modelCacheMB < 1 || modelCacheMB > maxFlagMB:
		return badUsage("serve: --model-cache-mb %d must be in [1, %d]", modelCacheMB, maxFlagMB)
	}
	return nil
}

// runServeFunc is runServe; tests replace it to see the options the
// flags make.
var runServeFunc = runServe

// llmFlags are serve's --llm-* flags.
type llmFlags struct {
	upstream, score, keyEnv string
	samples                 int
	timeout                 time.Duration
}

// options checks the flags and builds the proxy's options, with package
// llm's client drawing the samples.
func (f llmFlags) options() (server.LLMOptions, error) {
	if f.upstream == "" {
		for name, set := range map[string]bool{"--llm-api-key-env": f.keyEnv != "", "--llm-score": f.score != llmproxy.DefaultScore,
			"--llm-samples": f.samples != llmproxy.DefaultSamples, "--llm-timeout": f.timeout != llmproxy.DefaultTimeout} {
			if set {
				return server.LLMOptions{}, badUsage("serve: %s needs --llm-upstream", name)
			}
		}
		return server.LLMOptions{}, nil
	}
	switch {
	case f.samples < 2 || f.samples > llmproxy.MaxSamples:
		return server.LLMOptions{}, badUsage("serve: --llm-samples %d: want 2 to %d (an uncertainty needs two samples)", f.samples, llmproxy.MaxSamples)
	case !slices.Contains(llmproxy.Scores(), f.score):
		return server.LLMOptions{}, badUsage("serve: --llm-score %q: want %s", f.score, strings.Join(llmproxy.Scores(), ", "))
	case f.timeout <= 0:
		return server.LLMOptions{}, badUsage("serve: --llm-timeout %s: want a positive duration", f.timeout)
	}
	var key string
	if f.keyEnv != "" {
		key = os.Getenv(f.keyEnv)
		if key == "" {
			return server.LLMOptions{}, badUsage("serve: --llm-api-key-env %s: the environment variable %s is empty or unset", f.keyEnv, f.keyEnv)
		}
	}
	// One client for the upstream: its timeout is the proxy's (the
	// answer, the sampling as a whole, a gap in a stream), and retries of
	// the samples stay within it; 64 sample requests in flight serve 64
	// concurrent callers without queueing (passed-through requests are
	// not counted).
	c, err := llm.New(llm.Config{BaseURL: f.upstream, APIKey: key, Timeout: f.timeout, MaxRetries: 2, Concurrency: 64})
	if err != nil {
		return server.LLMOptions{}, badUsage("serve: --llm-upstream: %v", err)
	}
	return server.LLMOptions{Client: c, Samples: f.samples, Score: f.score}, nil
}

// secretLookup reads only the listed environment variables, so that a job
// request naming another (api_key_env) gets nothing.
func secretLookup(names []string) func(string) (string, bool) {
	if len(names) == 0 {
		return nil
	}
	return func(name string) (string, bool) {
		if !slices.Contains(names, name) {
			return "", false
		}
		return os.LookupEnv(name)
	}
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
		if err := server.CheckToken(token); err != nil {
			return badUsage("serve: --token-env %s: %s", tokenEnv, strings.TrimPrefix(err.Error(), "server: "))
		}
	}
	if token == "" && !server.IsLoopback(addr) {
		return badUsage("serve: --addr %s listens beyond this machine; set a bearer token with --token-env NAME", addr)
	}
	if jobs.Workers < 1 {
		return badUsage("serve: --workers %d must be at least 1", jobs.Workers)
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
	hs := srv.HTTPServer(addr)
	where := db
	if store.IsPostgresDSN(db) {
		where = "postgres"
	}
	log.Info("genlens serve listening", "url", "http://"+ln.Addr().String(), "store", st.Backend(), "db", where, "auth", token != "")
	if llmOpts.Client != nil {
		log.Info("LLM proxy", "url", "http://"+ln.Addr().String()+"/v1/chat/completions", "samples", llmOpts.Samples, "score", llmOpts.Score)
	}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		srv.Close(context.Background())
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	err = hs.Shutdown(sctx)
	err = errors.Join(err, srv.Close(sctx))
	if e := <-done; e != nil && !errors.Is(e, http.ErrServerClosed) {
		err = errors.Join(err, e)
	}
	if err != nil {
		return fmt.Errorf("serve: shutdown: %w", err)
	}
	log.Info("stopped")
	return nil
}
