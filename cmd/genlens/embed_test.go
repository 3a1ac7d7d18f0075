package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

func TestEmbedCommand(t *testing.T) {
	t.Setenv("GENLENS_CACHE", t.TempDir())
	dir := t.TempDir()
	in := filepath.Join(dir, "texts.txt")
	if err := os.WriteFile(in, []byte("Hello, world!\nhow many legs does a spider have?\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "E.npy")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"embed", "--embedder", "bge-small-en-v1.5", "--weights", "../../network/bert/testdata/bge", "--in", in, "--out", out, "--json"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var res struct {
		Texts, Dim int
		Prefix     string
	}
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	if res.Texts != 2 || res.Dim != 32 || res.Prefix != "" {
		t.Fatalf("result %+v", res)
	}
	if st, err := os.Stat(out); err != nil || st.Size() != 128+2*32*8 {
		t.Fatalf("E.npy: %v %v", st, err)
	}
	stderr.Reset()
	if code := run([]string{"embed", "--embedder", "bge-small-en-v1.5", "--weights", dir, "--in", in, "--out", out}, &stdout, &stderr); code != 2 {
		t.Fatalf("a directory without a model: exit %d, want 2 (%s)", code, stderr.String())
	}
}
