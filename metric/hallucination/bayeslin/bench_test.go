package bayeslin_test

import (
	"context"
	"testing"

	"github.com/genlens/genlens/metric/hallucination"
	"github.com/genlens/genlens/metric/hallucination/bayeslin"
)

// The performance target: one PHR estimate with the paper's settings (M = 40,
// N-n = 100, K = 2000) in under 0.5 s.
// Run: go test ./hallucination/bayeslin -run XXX -bench Estimate -count 3
func BenchmarkEstimate(b *testing.B) {
	for _, fs := range []string{"poly:3", "relu:32:1", "relu:128:1"} {
		for _, conc := range []int{1, 0} {
			name := fs + "/concurrency=GOMAXPROCS"
			if conc == 1 {
				name = fs + "/concurrency=1"
			}
			b.Run(name, func(b *testing.B) {
				m := bayeslin.Model{Features: mustFeatures(b, fs), Noise: 0.1, PriorScale: 1}
				tk := tasks(b, m, 16, 1, 1)[0]
				opt := hallucination.SyntheticDefaults
				opt.Concurrency = conc
				for b.Loop() {
					if _, err := hallucination.Estimate(context.Background(), m, tk.d, tk.x, opt); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// Extend is the inner loop of Algorithm 1: N-n rank-one updates per
// imagined dataset.
func BenchmarkUpdate(b *testing.B) {
	for _, fs := range []string{"poly:3", "relu:32:1", "relu:128:1"} {
		b.Run(fs, func(b *testing.B) {
			m := bayeslin.Model{Features: mustFeatures(b, fs), Noise: 0.1, PriorScale: 1}
			post, _ := m.Posterior(nil)
			e := bayeslin.Example{X: 0.3, Y: 1}
			for b.Loop() {
				if _, err := post.Update(e); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
