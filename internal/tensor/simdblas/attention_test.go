package simdblas

import (
	"math"
	"math/rand/v2"
	"testing"
)

// attentionRef is one head of attention in float64.
func attentionRef(q, k, v []float32, ld, t, dh int) []float64 {
	out := make([]float64, dh*t)
	s := make([]float64, t)
	for i := 0; i < t; i++ {
		mx := math.Inf(-1)
		for j := 0; j < t; j++ {
			var d float64
			for e := 0; e < dh; e++ {
				d += float64(q[e*ld+i]) * float64(k[e*ld+j])
			}
			s[j] = d
			mx = max(mx, d)
		}
		var sum float64
		for j := range s {
			s[j] = math.Exp(s[j] - mx)
			sum += s[j]
		}
		for d := 0; d < dh; d++ {
			var o float64
			for j := range s {
				o += s[j] * float64(v[d*ld+j])
			}
			out[d*t+i] = o / sum
		}
	}
	return out
}

// TestAttention checks Attention with each kernel against attention in
// float64, at token counts around the kernels' tile sizes and with the
// head inside a wider matrix, and that the kernels agree with each other
// on the same inputs; the columns around the head are left alone.
func TestAttention(t *testing.T) {
	defer func(k *kernel[float32]) { sgemmK = k }(sgemmK)
	rng := rand.New(rand.NewPCG(5, 6))
	for _, tc := range []struct{ t, dh, ld int }{{1, 8, 3}, {5, 64, 9}, {50, 64, 70}, {257, 64, 300}, {33, 13, 40}} {
		q := randF32(rng, tc.dh*tc.ld)
		for i := range q {
			q[i] *= 3 // scores of a few units, as in a trained network
		}
		k, v := randF32(rng, tc.dh*tc.ld), randF32(rng, tc.dh*tc.ld)
		want := attentionRef(q, k, v, tc.ld, tc.t, tc.dh)
		var first []float32
		for _, kn := range sgemmKernels() {
			sgemmK = kn
			out := make([]float32, tc.dh*tc.ld)
			for i := range out {
				out[i] = -7
			}
			var sc AttnScratch
			Attention(q, k, v, tc.ld, tc.t, tc.dh, out, tc.ld, &sc)
			for d := 0; d < tc.dh; d++ {
				for i := 0; i < tc.ld; i++ {
					got := out[d*tc.ld+i]
					if i >= tc.t {
						if got != -7 {
							t.Fatalf("t=%d %s: out[%d][%d] = %v, outside the head", tc.t, kn.name, d, i, got)
						}
						continue
					}
					if w := want[d*tc.t+i]; math.Abs(float64(got)-w) > 1e-5 {
						t.Fatalf("t=%d dh=%d %s: out[%d][%d] = %v, want %v", tc.t, tc.dh, kn.name, d, i, got, w)
					}
				}
			}
			// A second call on the same scratch gives the same bits.
			again := make([]float32, len(out))
			Attention(q, k, v, tc.ld, tc.t, tc.dh, again, tc.ld, &sc)
			for i := 0; i < tc.t; i++ {
				if again[i] != out[i] {
					t.Fatalf("t=%d %s: the scratch's second use changed out[0][%d]", tc.t, kn.name, i)
				}
			}
			if first == nil {
				first = out
				continue
			}
			for i := range out {
				if math.Abs(float64(out[i]-first[i])) > 1e-5 {
					t.Fatalf("t=%d %s: out[%d] = %v, the Go kernel's %v", tc.t, kn.name, i, out[i], first[i])
				}
			}
		}
	}
}
