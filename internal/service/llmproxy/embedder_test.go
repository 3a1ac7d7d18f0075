package llmproxy_test

import (
	"context"
	"math"
	"strings"
	"sync/atomic"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/internal/service/llmproxy"
	"github.com/genlens/genlens/metric/kernel"
	"github.com/genlens/genlens/metric/uncertainty"
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
	samples := fixedSampler{"Paris", "Lyon", "Paris", "Marseille"}
	emb := &wordVecs{}
	p, up := newTestProxy(t, llmproxy.Options{Sampler: samples, Samples: 4, Embedder: emb})
	out := callProxy(t, p, `{"model":"tiny","messages":[{"role":"user","content":"Capital of France?"}]}`)
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
	if emb.calls.Load() != 1 || out.Genlens.Uncertainty == nil || math.Abs(*out.Genlens.Uncertainty-want) > 1e-12 {
		t.Errorf("uncertainty %+v after %d embedder calls, want %v after 1", out.Genlens, emb.calls.Load(), want)
	}
	_, paths, _ := up.got()
	for _, path := range paths {
		if strings.HasSuffix(path, "/embeddings") {
			t.Errorf("the upstream's %s was called", path)
		}
	}
	if _, err := llmproxy.New(llmproxy.Options{Client: up.client, Embedder: emb, Score: "no-such"}); err == nil {
		t.Error("an unknown score with an embedder accepted")
	}
}
