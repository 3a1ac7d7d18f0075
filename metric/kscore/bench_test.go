package kscore

import (
	"context"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/metric/kernel"
)

// The performance target: RBF kernel entropy for 10,000 prompts x 20 samples x
// 384-d embeddings in under 1 s on 2 cores.
// Run: go test ./kscore -run XXX -bench Entropies -benchtime 5x
func BenchmarkEntropies10000x20x384(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	xs := make([]*mat.Dense, 10000)
	for i := range xs {
		xs[i] = gauss(r, 20, make([]float64, 384), 1)
	}
	k := kernel.RBF{Gamma: 1.0 / 384}
	b.ResetTimer()
	for b.Loop() {
		if _, err := Entropies(context.Background(), k, xs); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecompose20x100x64(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	var sets []*mat.Dense
	for i := 0; i < 20; i++ {
		sets = append(sets, gauss(r, 100, make([]float64, 64), 1))
	}
	y := gauss(r, 200, make([]float64, 64), 1)
	k := kernel.RBF{Gamma: 1.0 / 64}
	for b.Loop() {
		if _, err := Decompose(k, sets, y); err != nil {
			b.Fatal(err)
		}
	}
}
