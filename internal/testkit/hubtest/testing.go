package hubtest

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Isolate points every model cache a test could touch (HOME, genlens's
// feature cache, the Hugging Face hub's) into a new temporary folder,
// which it returns, and clears the hub's offline switch, so that a test
// never reads or writes the user's caches.
func Isolate(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("HOME", dir)
	t.Setenv("GENLENS_CACHE", filepath.Join(dir, "genlens"))
	t.Setenv("HF_HOME", filepath.Join(dir, "hf"))
	t.Setenv("HF_HUB_CACHE", "")
	t.Setenv("HF_HUB_OFFLINE", "")
	return dir
}

// BGE returns the repository BAAI/bge-small-en-v1.5 holding network/bert's
// tiny test model of that layout (config.json, vocab.txt and a
// model.safetensors served as a large file).
func BGE(t testing.TB) *Repo {
	t.Helper()
	_, here, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(here), "../../../network/bert/testdata/bge")
	repo := &Repo{ID: "BAAI/bge-small-en-v1.5", Commit: strings.Repeat("5e", 20), Files: map[string][]byte{},
		LFS: map[string]bool{"model.safetensors": true}}
	for _, name := range []string{"config.json", "vocab.txt", "model.safetensors"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		repo.Files[name] = b
	}
	return repo
}
