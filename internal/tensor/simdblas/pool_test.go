package simdblas

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestPoolKernels runs the Go loops and the AVX-512 kernels (where the
// CPU has them) of Max3, Sum3, Sum3Div and MaxStride2 on the same
// inputs, lengths around the groups of 16 and ±Inf and NaN among the
// values: each must give what its formula gives, element by element
// (zeros of either sign count as equal, as do NaNs).
func TestPoolKernels(t *testing.T) {
	defer func(v bool) { poolAVX512 = v }(poolAVX512)
	rng := rand.New(rand.NewPCG(11, 12))
	special := []float32{float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 0, float32(math.Copysign(0, -1))}
	vec := func(n int) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(rng.NormFloat64())
			if rng.IntN(7) == 0 {
				x[i] = special[rng.IntN(len(special))]
			}
		}
		return x
	}
	same := func(a, b float32) bool { return a == b || (a != a && b != b) }
	for _, n := range []int{1, 8, 15, 16, 17, 31, 32, 33, 48, 100, 257} {
		a, b, c, src := vec(n), vec(n), vec(n), vec(2*n+1)
		d := vec(n)
		for i := range d {
			d[i] = float32(1 + rng.IntN(9))
		}
		for _, avx := range []bool{false, hasAVX512} {
			poolAVX512 = avx
			mx, sm, sd, s2 := make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n)
			Max3(mx, a, b, c)
			Sum3(sm, a, b, c)
			Sum3Div(sd, a, b, c, d)
			MaxStride2(s2, src)
			for i := range n {
				want := max(a[i], b[i], c[i])
				if !same(mx[i], want) {
					t.Fatalf("n=%d avx=%v: Max3[%d] = %v, want %v", n, avx, i, mx[i], want)
				}
				if want := a[i] + b[i] + c[i]; !same(sm[i], want) {
					t.Fatalf("n=%d avx=%v: Sum3[%d] = %v, want %v", n, avx, i, sm[i], want)
				}
				if want := (a[i] + b[i] + c[i]) / d[i]; !same(sd[i], want) {
					t.Fatalf("n=%d avx=%v: Sum3Div[%d] = %v, want %v", n, avx, i, sd[i], want)
				}
				if want := max(src[2*i], src[2*i+1], src[2*i+2]); !same(s2[i], want) {
					t.Fatalf("n=%d avx=%v: MaxStride2[%d] = %v, want %v", n, avx, i, s2[i], want)
				}
			}
		}
	}
}
