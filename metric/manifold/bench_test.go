package manifold

import (
	"context"
	"math/rand/v2"
	"testing"
)

// go test ./manifold -run '^$' -bench PRDC -benchtime 3x
func BenchmarkPRDC2000x2048(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	real, fake := gauss(rng, 2000, 2048, 0), gauss(rng, 2000, 2048, 0.1)
	for b.Loop() {
		if _, err := Compute(context.Background(), real, fake, 5); err != nil {
			b.Fatal(err)
		}
	}
}
