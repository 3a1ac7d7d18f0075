package main

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/genlens/genlens/internal/service/server"
	"github.com/genlens/genlens/job"
)

// serveOptions runs `genlens serve args...` up to the server's start and
// returns the options its flags made, or the error refusing them.
func serveOptions(t *testing.T, args ...string) (server.Options, error) {
	t.Helper()
	var got server.Options
	called := false
	saved := runServeFunc
	t.Cleanup(func() { runServeFunc = saved })
	runServeFunc = func(_ context.Context, _, _, _ string, opts server.Options, _ interface{ Write([]byte) (int, error) }) error {
		got, called = opts, true
		return nil
	}
	cmd := newServeCmd()
	cmd.SetArgs(args)
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	err := cmd.ExecuteContext(context.Background())
	if err == nil && !called {
		t.Fatalf("serve %v: the server was not started", args)
	}
	return got, err
}

// serve bounds a job's runtime by default; 0 lifts the bound.
func TestServeDefaultMaxJobRuntime(t *testing.T) {
	for _, c := range []struct {
		args []string
		want time.Duration
	}{{nil, server.DefaultMaxJobRuntime}, {[]string{"--max-job-runtime", "0"}, 0}, {[]string{"--max-job-runtime", "90m"}, 90 * time.Minute}} {
		opts, err := serveOptions(t, c.args...)
		if err != nil {
			t.Fatal(err)
		}
		if opts.Jobs.MaxRuntime != c.want {
			t.Errorf("serve %v: max runtime %v, want %v", c.args, opts.Jobs.MaxRuntime, c.want)
		}
	}
	if server.DefaultMaxJobRuntime <= 0 {
		t.Errorf("no default bound: %v", server.DefaultMaxJobRuntime)
	}
}

// Each memory and disk flag of serve reaches its server option; left
// out, each keeps the server's default.
func TestServeMemoryFlagsReachOptions(t *testing.T) {
	opts, err := serveOptions(t)
	if err != nil {
		t.Fatal(err)
	}
	// Defaults: the server's own (0 is "the default" for the first two).
	if opts.MaxBodiesInFlight != 0 || opts.BodyWait != server.DefaultBodyWait || opts.MinFreeDisk != server.DefaultMinFreeDisk ||
		opts.Jobs.ModelCacheBytes != job.DefaultModelCacheBytes || opts.MaxBody != server.DefaultMaxBody {
		t.Errorf("defaults: bodies %d, wait %v, free disk %d, model cache %d, max body %d; want 0, %v, %d, %d, %d",
			opts.MaxBodiesInFlight, opts.BodyWait, opts.MinFreeDisk, opts.Jobs.ModelCacheBytes, opts.MaxBody,
			server.DefaultBodyWait, server.DefaultMinFreeDisk, job.DefaultModelCacheBytes, server.DefaultMaxBody)
	}
	opts, err = serveOptions(t, "--max-body-mb", "8", "--max-bodies-mb", "96", "--body-wait", "7s",
		"--min-free-disk-mb", "512", "--model-cache-mb", "200")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		flag      string
		got, want int64
	}{
		{"--max-body-mb", opts.MaxBody, 8 << 20},
		{"--max-bodies-mb", opts.MaxBodiesInFlight, 96 << 20},
		{"--body-wait", int64(opts.BodyWait), int64(7 * time.Second)},
		{"--min-free-disk-mb", opts.MinFreeDisk, 512 << 20},
		{"--model-cache-mb", opts.Jobs.ModelCacheBytes, 200 << 20},
	} {
		if c.got != c.want {
			t.Errorf("%s: option %d, want %d", c.flag, c.got, c.want)
		}
	}
}

// Values the server could not honour are refused before it starts, with
// a usage error (exit 2) naming the flag.
func TestServeMemoryFlagsRefused(t *testing.T) {
	for _, args := range [][]string{
		{"--max-bodies-mb", "-1"},
		{"--max-bodies-mb", "16"}, // below --max-body-mb (32)
		{"--max-body-mb", "8", "--max-bodies-mb", "4"},
		{"--max-bodies-mb", "2000000"},
		{"--body-wait", "0s"},
		{"--body-wait", "-5s"},
		{"--min-free-disk-mb", "0"},
		{"--min-free-disk-mb", "2000000"},
		{"--model-cache-mb", "0"},
		{"--model-cache-mb", "-3"},
	} {
		_, err := serveOptions(t, args...)
		flag := args[len(args)-2]
		var ue usageError
		// server.Options.Validate names its fields; serve spells them as its flags.
		if !errors.As(err, &ue) || !strings.Contains(message(err, newServeCmd()), flag) {
			t.Errorf("%v: error %v; want a usage error naming %s", args, err, flag)
		}
	}
}

// The text-model flags reach their options: --model-dir the jobs'
// allowed directories, --llm-embedder and --llm-weights the proxy's; the
// proxy's need --llm-upstream, and name an embedder and a score that uses
// embeddings.
func TestServeTextModelFlags(t *testing.T) {
	opts, err := serveOptions(t, "--model-dir", "/m/e5", "--model-dir", "/m/bge", "--llm-upstream", "http://127.0.0.1:1/v1",
		"--llm-embedder", "e5-small-v2", "--llm-weights", "/m/e5")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(opts.Jobs.ModelDirs, ",") != "/m/e5,/m/bge" || opts.LLM.Embedder != "e5-small-v2" || opts.LLM.Weights != "/m/e5" {
		t.Errorf("model dirs %q, embedder %q, weights %q", opts.Jobs.ModelDirs, opts.LLM.Embedder, opts.LLM.Weights)
	}
	for _, args := range [][]string{
		{"--llm-embedder", "e5-small-v2", "--llm-weights", "/m/e5"},
		{"--llm-upstream", "http://127.0.0.1:1/v1", "--llm-embedder", "gpt", "--llm-weights", "/m/e5"},
		{"--llm-upstream", "http://127.0.0.1:1/v1", "--llm-weights", "/m/e5"},
	} {
		if _, err := serveOptions(t, args...); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
}
