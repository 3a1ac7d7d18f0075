package llmproxy

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/metric/kernel"
	"github.com/genlens/genlens/metric/uncertainty"
)

// Embedder embeds texts in process: a bert.Embedder is one. Given to the
// proxy (Options.Embedder), it replaces the word kernels of the scores:
// kernel entropy takes an RBF kernel of bandwidth 1/dim on the samples'
// embeddings (the setting of Nikitin et al., "Kernel Language Entropy",
// NeurIPS 2024, with e5-small-v2), and kle, eigv and degree the cosine
// similarity of the embeddings (as `genlens entropy --similarity
// embedding`). No /embeddings endpoint is called.
type Embedder interface {
	Name() string
	Forward(ctx context.Context, texts []string) ([][]float32, error)
}

// EmbeddingScores lists the scores an Embedder changes.
func EmbeddingScores() []string {
	return []string{string(uncertainty.ScoreDegree), string(uncertainty.ScoreEcc), string(uncertainty.ScoreEigV), string(uncertainty.ScoreKernelEntropy), string(uncertainty.ScoreKLE)}
}

// embeddingScore returns the score named by score computed on the
// embeddings e gives the samples, nil for a score that does not use
// embeddings.
func embeddingScore(score string, e Embedder) scoreFunc {
	if !slices.Contains(EmbeddingScores(), score) {
		return nil
	}
	s := uncertainty.Score(score)
	return func(ctx context.Context, samples []string) (float64, error) {
		vecs, err := e.Forward(ctx, samples)
		if err != nil {
			return math.NaN(), fmt.Errorf("embedding the samples with %s: %w", e.Name(), err)
		}
		if len(vecs) != len(samples) || len(vecs) == 0 {
			return math.NaN(), fmt.Errorf("embedding the samples with %s: %d vectors for %d samples", e.Name(), len(vecs), len(samples))
		}
		d := len(vecs[0])
		m := mat.NewDense(len(vecs), d, nil)
		for i, v := range vecs {
			for j, x := range v {
				m.Set(i, j, float64(x))
			}
		}
		// The kernel's bandwidth is the embeddings' width, known now.
		sc, err := uncertainty.NewScorer(uncertainty.Options{Kernel: kernel.RBF{Gamma: 1 / float64(d)}, Scores: []uncertainty.Score{s},
			Similarity: uncertainty.SimilarityEmbedding, KLETime: uncertainty.DefaultKLETime})
		if err != nil {
			return math.NaN(), err
		}
		res, err := sc.Evaluate(uncertainty.Prompt{ID: "request", Samples: samples, Embeddings: m})
		if err != nil {
			return math.NaN(), err
		}
		u := res.Value(s)
		if math.IsNaN(u) {
			return math.NaN(), errors.New(res.Reason)
		}
		return u, nil
	}
}
