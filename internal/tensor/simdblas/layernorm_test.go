package simdblas

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestLayerNormCols runs the Go loops and the AVX-512 passes (where the
// CPU has them) on the same matrices, column counts around the bands of
// 64, in place and not: the bits must agree, and each column must be
// normalised.
func TestLayerNormCols(t *testing.T) {
	defer func(v bool) { expAVX512 = v }(expAVX512)
	rng := rand.New(rand.NewPCG(12, 12))
	for _, tc := range []struct{ w, n int }{{1, 64}, {7, 63}, {384, 64}, {384, 130}, {48, 257}} {
		x := randF32(rng, tc.w*tc.n)
		for i := range x {
			x[i] = x[i]*3 + 5
		}
		g, b := randF32(rng, tc.w), randF32(rng, tc.w)
		var outs [][]float32
		for _, avx := range []bool{false, hasAVX512} {
			expAVX512 = avx
			dst := make([]float32, len(x))
			LayerNormCols(x, tc.w, tc.n, g, b, 1e-6, dst)
			in := append([]float32(nil), x...)
			LayerNormCols(in, tc.w, tc.n, g, b, 1e-6, in)
			for i := range dst {
				if math.Float32bits(dst[i]) != math.Float32bits(in[i]) {
					t.Fatalf("%+v avx512=%v: value %d in place %v, not %v", tc, avx, i, in[i], dst[i])
				}
			}
			outs = append(outs, dst)
		}
		for j := 0; j < tc.n; j++ {
			var mean, ss float64
			for r := 0; r < tc.w; r++ {
				mean += float64(x[r*tc.n+j])
			}
			mean /= float64(tc.w)
			for r := 0; r < tc.w; r++ {
				d := float64(x[r*tc.n+j]) - mean
				ss += d * d
			}
			inv := 1 / math.Sqrt(ss/float64(tc.w)+1e-6)
			for r := 0; r < tc.w; r++ {
				i := r*tc.n + j
				want := (float64(x[i])-mean)*inv*float64(g[r]) + float64(b[r])
				for p, o := range outs {
					if math.Float32bits(o[i]) != math.Float32bits(outs[0][i]) {
						t.Fatalf("%+v path %d: value (%d, %d) = %v, the Go loops %v", tc, p, r, j, o[i], outs[0][i])
					}
					if math.Abs(float64(o[i])-want) > 1e-5*(1+math.Abs(want)) {
						t.Fatalf("%+v path %d: value (%d, %d) = %v, want %v", tc, p, r, j, o[i], want)
					}
				}
			}
		}
	}
}
