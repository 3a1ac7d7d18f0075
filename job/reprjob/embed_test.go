package reprjob

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/job"
)

// e5Fixture is the tiny e5-small-v2 of package bert's tests.
const e5Fixture = "../../network/bert/testdata/e5"

// TestEmbed embeds the fixture's first texts as PyTorch did (e5, the
// query prefix), then again from the cache.
func TestEmbed(t *testing.T) {
	t.Setenv("GENLENS_CACHE", t.TempDir())
	in := filepath.Join(t.TempDir(), "texts.jsonl")
	if err := os.WriteFile(in, []byte(`{"text":"Hello, world!"}`+"\n\n"+`{"text":"The quick brown fox jumps over the lazy dog."}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want, err := dataio.ReadArray(e5Fixture+"/expected.npz", dataio.ReadOptions{Key: "emb"})
	if err != nil {
		t.Fatal(err)
	}
	req := NewEmbedRequest()
	req.In, req.Embedder, req.Weights = in, "e5-small-v2", e5Fixture
	for run, hits := range []int{0, 2} {
		res, err := Embed(context.Background(), job.CLIEnv(nil, nil), req)
		if err != nil {
			t.Fatal(err)
		}
		if res.Texts != 2 || res.CacheHits != hits || res.Prefix != "query: " {
			t.Fatalf("run %d: %d texts, %d cache hits, prefix %q; want 2, %d, \"query: \"", run, res.Texts, res.CacheHits, res.Prefix, hits)
		}
		for i, v := range res.Embeddings {
			for j, x := range v {
				if d := float64(x) - want.Data[i*want.Shape[1]+j]; d > 1e-5 || d < -1e-5 {
					t.Fatalf("run %d text %d [%d]: %v, PyTorch %v", run, i, j, x, want.Data[i*want.Shape[1]+j])
				}
			}
		}
	}
	req.Prefix = "sometimes"
	if _, err := Embed(context.Background(), job.CLIEnv(nil, nil), req); err == nil {
		t.Fatal("a bad prefix was accepted")
	}
	// Compressed texts would be read as lines of gzip bytes.
	req.Prefix, req.In = "", in+".gz"
	var fe *fault.FieldError
	if err := req.Validate(); !errors.As(err, &fe) || fe.Field != "in" {
		t.Errorf("a .jsonl.gz: %v, want a field error of in", err)
	}
}
