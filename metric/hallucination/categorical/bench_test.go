package categorical_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/genlens/genlens/metric/hallucination"
	"github.com/genlens/genlens/metric/hallucination/categorical"
)

// One PHR estimate with the paper's settings (M = 40, N-n = 100, K = 2000).
// Run: go test ./hallucination/categorical -run XXX -bench Estimate -count 3
func BenchmarkEstimate(b *testing.B) {
	m := categorical.Symmetric(2, 3, 0.5)
	r := rand.New(rand.NewPCG(1, 2))
	truth, _ := m.SampleTruth(r)
	d := truth.Data(r, 16)
	for _, conc := range []int{1, 2} {
		b.Run(map[int]string{1: "concurrency=1", 2: "concurrency=2"}[conc], func(b *testing.B) {
			opt := hallucination.SyntheticDefaults
			opt.Concurrency = conc
			for b.Loop() {
				if _, err := hallucination.Estimate(context.Background(), m, d, 0, opt); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
