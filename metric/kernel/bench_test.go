package kernel

import (
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/internal/tensor/linalg"
)

// The performance target: a 4096×4096 RBF Gram matrix from 2048-d rows within
// 1.5x of the backend's GEMM time for the same product X Xᵀ.
// Run: go test ./kernel -run XXX -bench 'Gram4096|Gemm4096' -benchtime 3x
func BenchmarkRBFGram4096x2048(b *testing.B) {
	x := randMat(rand.New(rand.NewPCG(1, 1)), 4096, 2048)
	k := RBF{Gamma: 1.0 / 2048}
	for b.Loop() {
		k.Gram(x)
	}
}

func BenchmarkGemm4096x2048(b *testing.B) {
	x := randMat(rand.New(rand.NewPCG(1, 1)), 4096, 2048)
	c := mat.NewDense(4096, 4096, nil)
	b.Logf("backend: %s", linalg.Backend())
	for b.Loop() {
		c.Mul(x, x.T())
	}
}

func BenchmarkRBFCross1024x1024x512(b *testing.B) {
	r := rand.New(rand.NewPCG(2, 2))
	x, y := randMat(r, 1024, 512), randMat(r, 1024, 512)
	k := RBF{Gamma: 1.0 / 512}
	for b.Loop() {
		k.Cross(x, y)
	}
}

func BenchmarkCSGram20Answers(b *testing.B) {
	seqs := [][]string{}
	r := rand.New(rand.NewPCG(3, 3))
	vocab := []string{"the", "capital", "of", "france", "is", "paris", "lyon", "city"}
	for i := 0; i < 20; i++ {
		var s []string
		for j := 0; j < 1+r.IntN(8); j++ {
			s = append(s, vocab[r.IntN(len(vocab))])
		}
		seqs = append(seqs, s)
	}
	for b.Loop() {
		CS{T: 2}.Gram(seqs)
	}
}
