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
	"time"

	"github.com/spf13/cobra"

	"genlens/server"
	"genlens/store"
)

func newServeCmd() *cobra.Command {
	var addr, db, tokenEnv, dataDir string
	var workers, maxBodyMB int
	var allowURLs, secretEnvs []string
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
server down gracefully.`,
		Example: `  genlens serve
  GENLENS_TOKEN=$(openssl rand -hex 16) genlens serve --addr :8080 --token-env GENLENS_TOKEN \
      --db postgres://genlens@db.internal/genlens`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			jobs := server.JobOptions{DataDir: dataDir, Workers: workers, AllowedBaseURLs: allowURLs, Secret: secretLookup(secretEnvs)}
			if maxBodyMB < 1 {
				return badUsage("serve: --max-body-mb %d must be at least 1", maxBodyMB)
			}
			return runServe(cmd.Context(), addr, db, tokenEnv, int64(maxBodyMB)<<20, jobs, cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVar(&addr, "addr", "127.0.0.1:8080", "listen address host:port (port 0 picks a free one)")
	f.StringVar(&db, "db", "genlens.db", "SQLite file, or a postgres://... URL")
	f.StringVar(&tokenEnv, "token-env", "", "name of the environment variable holding the bearer token (required beyond loopback)")
	f.StringVar(&dataDir, "data-dir", "", "directory of uploaded job inputs; replicas share it (default: DB.data beside a SQLite file, ./genlens-data with Postgres)")
	f.IntVar(&workers, "workers", 1, "jobs this process runs at once")
	f.IntVar(&maxBodyMB, "max-body-mb", int(server.DefaultMaxBody>>20), "largest JSON request body in MiB (a rows batch, a monitor with its model file)")
	f.StringSliceVar(&allowURLs, "allow-base-url", nil, "an LLM API root jobs may call (hallucination run --backend openai, sample: base_url and embed_base_url); none: no outbound calls")
	f.StringSliceVar(&secretEnvs, "secret-env", nil, "an environment variable jobs may read as an API key (their api_key_env); none: no secrets")
	return cmd
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

func runServe(ctx context.Context, addr, db, tokenEnv string, maxBody int64, jobs server.JobOptions, stderr interface{ Write([]byte) (int, error) }) error {
	var token string
	if tokenEnv != "" {
		token = os.Getenv(tokenEnv)
		if token == "" {
			return badUsage("serve: --token-env %s: the environment variable %s is empty or unset", tokenEnv, tokenEnv)
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
	srv, err := server.New(ctx, server.Options{Store: st, Token: token, Logger: log, Jobs: jobs, MaxBody: maxBody})
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
