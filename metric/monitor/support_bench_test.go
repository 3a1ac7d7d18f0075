package monitor

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkPrepareLargeReference is the first page of a monitor whose
// model carries a 200,000-row, one-feature drift reference: preparing
// the drift model (sorting, held-out reconstruction errors, the
// nearest-neighbour support of every reference row) once.
func BenchmarkPrepareLargeReference(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	x := normalRows(r, 200000, func(z []float64) []float64 { return z[:1] })
	for b.Loop() {
		m, err := FitDrift(x, []string{"a"})
		if err != nil {
			b.Fatal(err)
		}
		m.prepare()
	}
}
