package llmproxy_test

import (
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/kernel"
	"github.com/genlens/genlens/llm"
	"github.com/genlens/genlens/llmproxy"
	"github.com/genlens/genlens/uncertainty"
)

// wordVecs embeds a text as a fixed vector per first letter.
type wordVecs struct{ calls atomic.Int32 }

func (w *wordVecs) Name() string { return "letters" }

func (w *wordVecs) Forward(ctx context.Context, texts []string) ([][]float32, error) {
	w.calls.Add(1)
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, 3)
		v[int(t[0])%3] = 1
		v[(int(t[0])+1)%3] = 0.5
		out[i] = v
	}
	return out, nil
}

// With an embedder the proxy scores the samples' embeddings in process
// (kernel entropy with an RBF kernel of bandwidth 1/dim), and calls no
// /embeddings endpoint.
func TestProxyEmbedder(t *testing.T) {
	var paths []string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paths = append(paths, r.URL.Path)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"x","model":"tiny","choices":[{"index":0,"message":{"role":"assistant","content":"Paris"}}]}`+"\n")
	}))
	defer up.Close()
	c, err := llm.New(llm.Config{BaseURL: up.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	samples := fixedSampler{"Paris", "Lyon", "Paris", "Marseille"}
	emb := &wordVecs{}
	p, err := llmproxy.New(llmproxy.Options{Client: c, Sampler: samples, Samples: 4, Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(p)
	defer ts.Close()
	resp, err := http.Post(ts.URL, "application/json", strings.NewReader(`{"model":"tiny","messages":[{"role":"user","content":"Capital of France?"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var out struct{ Genlens struct{ Uncertainty float64 } }
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	vecs, _ := (&wordVecs{}).Forward(context.Background(), samples)
	m := mat.NewDense(4, 3, nil)
	for i, v := range vecs {
		for j, x := range v {
			m.Set(i, j, float64(x))
		}
	}
	res, _, err := uncertainty.Evaluate(context.Background(), []uncertainty.Prompt{{Samples: samples, Embeddings: m}},
		uncertainty.Options{Kernel: kernel.RBF{Gamma: 1.0 / 3}, Scores: []uncertainty.Score{uncertainty.ScoreKernelEntropy}})
	if err != nil {
		t.Fatal(err)
	}
	want := res[0].KernelEntropy
	if emb.calls.Load() != 1 || math.Abs(out.Genlens.Uncertainty-want) > 1e-12 {
		t.Errorf("uncertainty %v after %d embedder calls, want %v after 1 (%s)", out.Genlens.Uncertainty, emb.calls.Load(), want, b)
	}
	for _, path := range paths {
		if strings.HasSuffix(path, "/embeddings") {
			t.Errorf("the upstream's %s was called", path)
		}
	}
	if _, err := llmproxy.New(llmproxy.Options{Client: c, Embedder: emb, Score: "no-such"}); err == nil {
		t.Error("an unknown score with an embedder accepted")
	}
}
