package main

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/genlens/genlens/internal/testkit/hubtest"
)

// TestEmbedFetchesByName: embed --embedder bge-small-en-v1.5 without
// --weights fetches the model from the hub (HF_ENDPOINT, a fake one
// serving the tiny test model) into the Hugging Face cache, reporting the
// download on stderr; the next runs, the server gone and then
// HF_HUB_OFFLINE set, use the cache, by name or by model id, and every
// run records the same weights' hash.
func TestEmbedFetchesByName(t *testing.T) {
	dir := hubtest.Isolate(t)
	repo := hubtest.BGE(t)
	srv := httptest.NewServer(&hubtest.Hub{Repos: []*hubtest.Repo{repo}})
	t.Setenv("HF_ENDPOINT", srv.URL)
	in := filepath.Join(dir, "texts.txt")
	os.WriteFile(in, []byte("Hello, world!\nhow many legs does a spider have?\n"), 0o644)
	want := hubtest.SHA256(repo.Files["model.safetensors"])
	embed := func(extra ...string) (string, string) {
		t.Helper()
		args := append([]string{"embed", "--embedder", "bge-small-en-v1.5", "--in", in, "--out", filepath.Join(t.TempDir(), "E.npy"), "--json", "--no-cache"}, extra...)
		code, stdout, stderr := cli(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", extra, code, stderr)
		}
		var res struct {
			Dim    int
			SHA256 string `json:"weights_sha256"`
		}
		if err := json.Unmarshal([]byte(stdout), &res); err != nil || res.Dim != 32 {
			t.Fatalf("%v: %v, %s", extra, err, stdout)
		}
		return res.SHA256, stderr
	}
	sum, stderr := embed()
	if sum != want {
		t.Errorf("weights_sha256 %s, want %s", sum, want)
	}
	if !strings.Contains(stderr, "downloading (once) "+srv.URL+"/BAAI/bge-small-en-v1.5/resolve/") {
		t.Errorf("no download reported: %q", stderr)
	}
	snap := filepath.Join(dir, "hf", "hub", "models--BAAI--bge-small-en-v1.5", "snapshots", repo.Commit, "model.safetensors")
	if _, err := os.Stat(snap); err != nil {
		t.Errorf("not in the hub's cache layout: %v", err)
	}
	srv.Close()
	for _, tc := range []struct {
		offline string
		extra   []string
	}{{"", nil}, {"1", nil}, {"1", []string{"--weights", repo.ID}}} {
		t.Setenv("HF_HUB_OFFLINE", tc.offline)
		if sum, stderr := embed(tc.extra...); sum != want || strings.Contains(stderr, "downloading") {
			t.Errorf("cached %+v: weights_sha256 %s, stderr %q", tc, sum, stderr)
		}
	}
	// A path that is not there and is no model id says so.
	code, _, stderr := cli(t, "embed", "--embedder", "bge-small-en-v1.5", "--weights", filepath.Join(dir, "nope"), "--in", in, "--out", filepath.Join(dir, "x.npy"))
	if code != 2 || !strings.Contains(stderr, "nope: does not exist") {
		t.Errorf("missing folder: exit %d, %q", code, stderr)
	}
}

// TestServeModelsByName: the proxy's embedder is found by name in the
// hub's cache (offline here) and its folder handed to the server; one not
// cached is refused before the server starts. --allow-downloads reaches
// the jobs' options, with the reason jobs are told when it is off.
func TestServeModelsByName(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HOME", dir)
	t.Setenv("HF_HUB_CACHE", filepath.Join(dir, "hub"))
	t.Setenv("HF_HUB_OFFLINE", "1")
	commit := strings.Repeat("b9", 20)
	root := filepath.Join(dir, "hub", "models--BAAI--bge-small-en-v1.5")
	snap := filepath.Join(root, "snapshots", commit)
	os.MkdirAll(snap, 0o755)
	os.MkdirAll(filepath.Join(root, "refs"), 0o755)
	os.WriteFile(filepath.Join(root, "refs", "main"), []byte(commit), 0o644)
	for _, name := range []string{"config.json", "vocab.txt", "model.safetensors"} {
		b, err := os.ReadFile(filepath.Join("../../network/bert/testdata/bge", name))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(snap, name), b, 0o644)
	}
	up := []string{"--llm-upstream", "http://127.0.0.1:1/v1", "--llm-score", "kernel-entropy"}
	opts, err := serveOptions(t, append(up, "--llm-embedder", "bge-small-en-v1.5")...)
	if err != nil || opts.LLM.Weights != snap {
		t.Errorf("embedder by name: weights %q, %v; want %s", opts.LLM.Weights, err, snap)
	}
	opts, err = serveOptions(t, append(up, "--llm-embedder", "bert", "--llm-weights", "hf:BAAI/bge-small-en-v1.5")...)
	if err != nil || opts.LLM.Weights != snap {
		t.Errorf("model id: weights %q, %v; want %s", opts.LLM.Weights, err, snap)
	}
	if _, err := serveOptions(t, append(up, "--llm-embedder", "e5-small-v2")...); err == nil || !strings.Contains(err.Error(), "intfloat/e5-small-v2 is not in the Hugging Face cache") {
		t.Errorf("not cached: %v", err)
	}
	for _, allow := range []bool{false, true} {
		args := []string{}
		if allow {
			args = append(args, "--allow-downloads")
		}
		opts, err := serveOptions(t, args...)
		if err != nil || opts.Jobs.Downloads != allow || !strings.Contains(opts.Jobs.NoDownloads, "--allow-downloads") {
			t.Errorf("--allow-downloads %v: %v, %+v", allow, err, opts.Jobs.Downloads)
		}
	}
}
