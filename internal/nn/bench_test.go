package nn

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// The performance target: one check-model fit (100 rows, 200 epochs, the
// paper's 1 -> 64 -> 64 -> 1 network, full batch) under 50 ms.
// Run: go test ./nn -run XXX -bench Fit100 -count 3
func BenchmarkFit100x200(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	const n = 100
	x := mat.NewDense(n, 1, nil)
	y := make([]float64, n)
	for i := range y {
		v := r.NormFloat64()
		x.Set(i, 0, v)
		y[i] = math.Sin(3*v) + 0.3*r.NormFloat64()
	}
	cfg := DefaultTrainConfig()
	b.ReportAllocs()
	for b.Loop() {
		net, _ := New([]int{1, 64, 64, 1}, r)
		if _, err := Fit(context.Background(), net, x, MSE(y), cfg, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// A 500-row fit, the paper's LIBSVM protocol (Section 4.2).
func BenchmarkFit500x200(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	const n, d = 500, 8
	x := mat.NewDense(n, d, nil)
	y := make([]float64, n)
	for i := range y {
		var s float64
		for j := 0; j < d; j++ {
			v := r.NormFloat64()
			x.Set(i, j, v)
			s += math.Sin(v)
		}
		y[i] = s + 0.3*r.NormFloat64()
	}
	cfg := DefaultTrainConfig()
	b.ReportAllocs()
	for b.Loop() {
		net, _ := New([]int{d, 64, 64, 1}, r)
		if _, err := Fit(context.Background(), net, x, MSE(y), cfg, nil); err != nil {
			b.Fatal(err)
		}
	}
}
