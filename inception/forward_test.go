package inception

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestPools compares the separable pools with a direct 3×3 window on odd
// and even map sizes, including the 1×1 and 2×2 maps where every window
// is clipped by the padding.
func TestPools(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	ar := new(arena)
	for _, sz := range [][2]int{{1, 1}, {2, 2}, {3, 5}, {8, 8}, {17, 17}, {35, 36}} {
		in := fmap{2, sz[0], sz[1], make([]float32, 2*sz[0]*sz[1])}
		for i := range in.d {
			in.d[i] = float32(rng.NormFloat64())
		}
		for _, sp := range [][2]int{{1, 1}, {2, 0}} {
			stride, pad := sp[0], sp[1]
			if outSize(in.h, 3, stride, pad) < 1 || outSize(in.w, 3, stride, pad) < 1 {
				continue
			}
			got := maxPool(in, stride, pad, nil, 0, ar)
			want := naivePool(in, stride, pad, true)
			compare(t, "max", sz, got.d, want)
		}
		compare(t, "avg", sz, avgPool(in, ar).d, naivePool(in, 1, 1, false))
	}
}

func compare(t *testing.T, what string, sz [2]int, got, want []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s %v: %d outputs, want %d", what, sz, len(got), len(want))
	}
	for i := range got {
		if math.Abs(float64(got[i]-want[i])) > 1e-6 {
			t.Fatalf("%s %v: output %d is %g, want %g", what, sz, i, got[i], want[i])
		}
	}
}

// naivePool is the textbook 3×3 pool: the maximum, or the mean over the
// pixels inside the map (count_include_pad=False).
func naivePool(in fmap, stride, pad int, isMax bool) []float32 {
	ho, wo := outSize(in.h, 3, stride, pad), outSize(in.w, 3, stride, pad)
	out := make([]float32, in.c*ho*wo)
	for c := 0; c < in.c; c++ {
		for oy := 0; oy < ho; oy++ {
			for ox := 0; ox < wo; ox++ {
				m, s, n := float32(math.Inf(-1)), float32(0), 0
				for i := 0; i < 3; i++ {
					for j := 0; j < 3; j++ {
						y, x := oy*stride+i-pad, ox*stride+j-pad
						if y < 0 || y >= in.h || x < 0 || x >= in.w {
							continue
						}
						v := in.d[(c*in.h+y)*in.w+x]
						m, s, n = max(m, v), s+v, n+1
					}
				}
				if isMax {
					out[(c*ho+oy)*wo+ox] = m
				} else {
					out[(c*ho+oy)*wo+ox] = s / float32(n)
				}
			}
		}
	}
	return out
}
