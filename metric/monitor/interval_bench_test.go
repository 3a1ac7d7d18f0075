package monitor

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkIntervalCalibrate times the calibration of the interval's
// width, done once per Run: about 54 ms for a reference of 6,000 rows
// and chunks of 500, 24 ms for 1,000 and 250 (two shared cores).
func BenchmarkIntervalCalibrate(b *testing.B) {
	for _, c := range []struct{ n, size int }{{1000, 250}, {6000, 500}} {
		r := rand.New(rand.NewPCG(1, 2))
		held, real := make([]float64, c.n), make([]float64, c.n)
		for i := range c.n {
			e := r.NormFloat64()
			held[i], real[i] = 1+0.1*r.NormFloat64(), e*e
		}
		b.Run(fmt.Sprintf("n=%d/size=%d", c.n, c.size), func(b *testing.B) {
			for b.Loop() {
				newIntervalModel(held, real, nil).calibrate(c.size)
			}
		})
	}
}
