package llmjob

import (
	"context"
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/job/internal/textembed"
	"github.com/genlens/genlens/metric/uncertainty"
)

// embedSamples sets each prompt's embedding rows to the embeddings of its
// samples, computed in process; the samples take the prefix of the choice
// prefix (textembed.Prefix: by default the embedder's query prefix, if it
// has one, e5's "query: ", for symmetric tasks).
func embedSamples(ctx context.Context, env job.Env, prompts []uncertainty.Prompt, recs []dataio.Record, name, dir, prefix string) error {
	e, err := textembed.Load(ctx, env, name, dir, prefix)
	if err != nil {
		return err
	}
	var texts []string
	for _, r := range recs {
		texts = append(texts, r.Samples...)
	}
	vecs := make([][]float32, 0, len(texts))
	for i := 0; i < len(texts); i += textembed.Batch {
		v, err := e.Forward(ctx, texts[i:min(len(texts), i+textembed.Batch)])
		if err != nil {
			return fmt.Errorf("embedding the samples with %s: %w", name, err)
		}
		vecs = append(vecs, v...)
	}
	k := 0
	for i, r := range recs {
		if len(r.Samples) == 0 {
			continue
		}
		m := mat.NewDense(len(r.Samples), e.Dim(), nil)
		for j := range r.Samples {
			for c, x := range vecs[k] {
				m.Set(j, c, float64(x))
			}
			k++
		}
		prompts[i].Embeddings = m
	}
	return nil
}
