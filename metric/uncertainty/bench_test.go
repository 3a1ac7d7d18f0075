package uncertainty

import (
	"context"
	"strconv"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/internal/testkit/shareddata"
	"github.com/genlens/genlens/metric/kernel"
)

// BenchmarkEvaluateQwen1000 scores the 1000 prompts × 10 samples of the
// Qwen TriviaQA file (samples[1:] with HoldoutFirst) with the default
// scores and with every score, to price the graph scores.
// Run: go test ./uncertainty -run XXX -bench EvaluateQwen1000 -benchtime 20x -count 5
func BenchmarkEvaluateQwen1000(b *testing.B) {
	recs, err := dataio.ReadRecords(shareddata.Path(b, "llm/triviaqa_qwen2.5-7b_1000x10.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	prompts := make([]Prompt, len(recs))
	for i, r := range recs {
		prompts[i] = Prompt{ID: r.ID, Samples: r.Samples, References: r.Reference}
	}
	for _, c := range []struct {
		name   string
		scores []Score
	}{{"default", nil}, {"all", AllScores}, {"graph", []Score{ScoreKLE, ScoreEigV, ScoreDegree}}} {
		b.Run(c.name, func(b *testing.B) {
			opt := Options{Sequence: kernel.CS{T: 2, Cumulative: true}, HoldoutFirst: true, Scores: c.scores}
			for b.Loop() {
				if _, _, err := Evaluate(context.Background(), prompts, opt); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkGraphScores9 prices each graph score on one 9 × 9 similarity
// matrix, the size of the Qwen file's samples[1:].
func BenchmarkGraphScores9(b *testing.B) {
	s := mat.NewDense(9, 9, nil)
	for i := 0; i < 9; i++ {
		for j := 0; j < 9; j++ {
			s.Set(i, j, float64((i*7+j*3)%5)/5)
		}
	}
	w := SimilarityGraph(s)
	b.Run("kle", func(b *testing.B) {
		for b.Loop() {
			KLE(w, 0.3)
		}
	})
	b.Run("eigv", func(b *testing.B) {
		for b.Loop() {
			EigV(w)
		}
	})
	b.Run("degree", func(b *testing.B) {
		for b.Loop() {
			Degree(w)
		}
	})
}

// BenchmarkTokenRelevanceRougeL prices the RougeL similarity of an
// answer of n one-word tokens with itself without each token, what
// TokenSAR reads of one answer and SAR of each sample: the proxy bounds
// n (llmproxy.MaxRelevanceTokens) by it.
// Run: go test ./metric/uncertainty -run XXX -bench TokenRelevanceRougeL -count 3
func BenchmarkTokenRelevanceRougeL(b *testing.B) {
	words := []string{" the", " capital", " of", " France", " is", " Paris", ",", " on", " the", " Seine"}
	for _, n := range []int{64, 256, 1024} {
		toks := make([]string, n)
		for i := range toks {
			toks[i] = words[i%len(words)]
		}
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			for b.Loop() {
				if _, err := TokenSimilarities(toks, func(a string, without []string) ([]float64, error) {
					return RougeTextSimilarity(a, without), nil
				}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
