package llmjob

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/tensor/linalg"
	"github.com/genlens/genlens/internal/testkit/shareddata"
	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/job/internal/textembed"
	"github.com/genlens/genlens/network/bert"
)

const e5Fixture = "../../network/bert/testdata/e5"

// firstLines writes the first n lines of a file to a temporary file.
func firstLines(t *testing.T, path string, n int) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	var b strings.Builder
	for i := 0; i < n && sc.Scan(); i++ {
		b.WriteString(sc.Text() + "\n")
	}
	out := filepath.Join(t.TempDir(), "answers.jsonl")
	if err := os.WriteFile(out, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestEntropyTextEmbedder scores TriviaQA answers with embeddings computed
// in process and with the same embeddings computed beforehand and given
// as a file, for each choice of the prefix: the entropies agree.
func TestEntropyTextEmbedder(t *testing.T) {
	in := firstLines(t, shareddata.Path(t, "llm/triviaqa_llama13b_500x20.jsonl"), 20)
	recs, err := dataio.ReadRecords(in)
	if err != nil {
		t.Fatal(err)
	}
	m, err := bert.Load(e5Fixture, false)
	if err != nil {
		t.Fatal(err)
	}
	spec, _ := bert.Lookup("e5-small-v2")
	env := job.CLIEnv(nil, nil)
	for _, c := range []struct{ choice, text string }{{"", "query: "}, {"none", ""}, {"passage", "passage: "}} {
		req := NewEntropyRequest()
		req.In, req.Kernel, req.Scores, req.HoldoutFirst = in, "rbf", "kernel-entropy", true
		req.Embedder, req.Weights, req.Prefix = "e5-small-v2", e5Fixture, c.choice
		got, err := Entropy(context.Background(), env, req)
		if err != nil {
			t.Fatal(err)
		}
		s := len(recs[0].Samples)
		arr := &dataio.Array{Shape: []int{len(recs), s, m.Config().Hidden}}
		for _, r := range recs {
			v, err := m.Embed(context.Background(), spec, c.text, r.Samples, 1)
			if err != nil {
				t.Fatal(err)
			}
			for _, row := range v {
				for _, x := range row {
					arr.Data = append(arr.Data, float64(x))
				}
			}
		}
		npy := filepath.Join(t.TempDir(), "e.npy")
		if err := dataio.WriteNPY(npy, arr); err != nil {
			t.Fatal(err)
		}
		req.Embedder, req.Weights, req.Prefix, req.Embeddings = "", "", "", npy
		want, err := Entropy(context.Background(), env, req)
		if err != nil {
			t.Fatal(err)
		}
		for i := range want.Items {
			a, b := got.Items[i].Score("kernel_entropy"), want.Items[i].Score("kernel_entropy")
			// The same vectors either way on the pure-Go build. Under -tags
			// openblas the encoder's products are split by OpenBLAS by the
			// batch's shape, so the file's vectors (embedded in another batch)
			// agree to float32 rounding only.
			tol := 1e-12
			if !linalg.SgemmKernel() {
				tol = 1e-6
			}
			if a == nil || b == nil || math.Abs(float64(*a-*b)) > tol*math.Max(1, math.Abs(float64(*b))) {
				t.Fatalf("prefix %q row %d: kernel entropy %v in process, %v from the file embedded after %q", c.choice, i, a, b, c.text)
			}
		}
	}
}

func TestEntropyTextEmbedderRefused(t *testing.T) {
	base := NewEntropyRequest()
	base.In, base.Kernel = "a.jsonl", "rbf"
	for _, c := range []struct {
		name  string
		edit  func(*EntropyRequest)
		field string
	}{
		// e5-small-v2 without weights is fetched by name; bert is any
		// BERT folder, which must be given.
		{"no weights", func(r *EntropyRequest) { r.Embedder = "bert" }, "weights"},
		{"unknown", func(r *EntropyRequest) { r.Embedder, r.Weights = "gpt", "d" }, "embedder"},
		{"weights alone", func(r *EntropyRequest) { r.Weights = "d" }, "weights"},
		{"both", func(r *EntropyRequest) { r.Embedder, r.Weights, r.Embeddings = "e5-small-v2", "d", "e.npy" }, "embedder"},
		{"cs kernel", func(r *EntropyRequest) { r.Kernel, r.Embedder, r.Weights = "cs", "e5-small-v2", "d" }, "embedder"},
		{"unknown prefix", func(r *EntropyRequest) { r.Embedder, r.Weights, r.Prefix = "e5-small-v2", "d", "document" }, "prefix"},
		{"prefix alone", func(r *EntropyRequest) { r.Prefix = "none" }, "prefix"},
	} {
		r := base
		c.edit(&r)
		err := r.Validate()
		var fe *fault.FieldError
		if !errors.As(err, &fe) || fe.Field != c.field {
			t.Errorf("%s: error %v, want one naming {%s}", c.name, err, c.field)
		}
	}
	// Which directories a service's job may load is the service's rule
	// (jobrun's TestTextModelRefused), applied before the job runs.
}

// TestSampleTextEmbedder: sample --embedder stores the embeddings the
// embedder computes in process (with its query prefix) for every sample,
// where --embed-model would store the endpoint's.
func TestSampleTextEmbedder(t *testing.T) {
	srv, _ := sampleServer(t, nil)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "p.jsonl"), promptsFile(6), 0o644); err != nil {
		t.Fatal(err)
	}
	req := sampleReq(srv.URL)
	req.Prompts = filepath.Join(dir, "p.jsonl")
	req.Embedder, req.Weights = "e5-small-v2", e5Fixture
	env := job.CLIEnv(nil, nil)
	env.Secret = sampleSecrets
	res, err := Sample(context.Background(), env, req)
	if err != nil {
		t.Fatal(err)
	}
	e, err := bert.OpenEmbedder("e5-small-v2", e5Fixture, "query: ")
	if err != nil {
		t.Fatal(err)
	}
	var all bytes.Buffer
	for _, r := range res.Rows() {
		all.Write(r)
	}
	rows, _ := readOut(t, all.Bytes())
	if len(rows) != 6 {
		t.Fatalf("%d rows", len(rows))
	}
	for _, r := range rows {
		want, err := e.Forward(context.Background(), r.Samples)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Embeddings) != len(r.Samples) {
			t.Fatalf("%d embeddings of %d samples", len(r.Embeddings), len(r.Samples))
		}
		for j := range want {
			if len(r.Embeddings[j]) != len(want[j]) {
				t.Fatalf("embedding of dim %d, want %d", len(r.Embeddings[j]), len(want[j]))
			}
			for c, x := range want[j] {
				if float32(r.Embeddings[j][c]) != x {
					t.Fatalf("sample %q: embedding[%d] = %v, want %v", r.Samples[j], c, r.Embeddings[j][c], x)
				}
			}
		}
	}

	for _, tc := range []struct {
		field string
		edit  func(*SampleRequest)
	}{
		{"embedder", func(r *SampleRequest) { r.EmbedModel = "genlens-embedding" }},
		{"weights", func(r *SampleRequest) { r.Embedder, r.Weights = "bert", "" }},
		{"embedder", func(r *SampleRequest) { r.Embedder = "nope" }},
		{"prefix", func(r *SampleRequest) { r.Prefix = "doc" }},
		{"prefix", func(r *SampleRequest) { r.Embedder, r.Weights, r.Prefix = "", "", "none" }},
	} {
		bad := req
		tc.edit(&bad)
		var fe *fault.FieldError
		if err := bad.Validate(); !errors.As(err, &fe) || fe.Field != tc.field {
			t.Errorf("%+v: err = %v, want a field error on %s", tc, err, tc.field)
		}
	}
}

// A text embedder is kept in the job's model cache: a second job with
// the same weights does not load them again.
func TestTextEmbedderCached(t *testing.T) {
	env := job.CLIEnv(nil, nil)
	env.Models = job.NewModelCache(0)
	a, err := textembed.Load(context.Background(), env, "e5-small-v2", e5Fixture, "")
	if err != nil {
		t.Fatal(err)
	}
	b, err := textembed.Load(context.Background(), env, "e5-small-v2", e5Fixture, "")
	if err != nil {
		t.Fatal(err)
	}
	c, err := textembed.LoadPrefix(context.Background(), env, "e5-small-v2", e5Fixture, "passage: ")
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := env.Models.Len(); a != b || a == c || n != 2 {
		t.Errorf("same embedder twice: %v; other prefix apart: %v; %d kept, want 2", a == b, a != c, n)
	}
}
