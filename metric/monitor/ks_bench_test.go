package monitor

import (
	"fmt"
	"testing"
)

// BenchmarkKSPValue times the exact p-value for a reference of 10,000
// values (the largest computed exactly) against chunks of 100 and 1,000,
// at a statistic near the 5% critical value and at a large one (the
// cache of p-values emptied before each).
//
//	go test ./monitor -run '^$' -bench KSPValue
func BenchmarkKSPValue(b *testing.B) {
	for _, n2 := range []int{100, 1000} {
		for _, d := range []float64{0.13, 0.5} {
			if n2 == 1000 {
				d /= 3
			}
			b.Run(fmt.Sprintf("10000x%d/d=%.3f", n2, d), func(b *testing.B) {
				for b.Loop() {
					ksCache.Lock()
					clear(ksCache.m) // measure the computation, not the cache
					ksCache.Unlock()
					KSPValue(d, 10000, n2)
				}
			})
		}
	}
}
