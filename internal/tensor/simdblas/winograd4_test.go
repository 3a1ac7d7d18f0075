package simdblas

import (
	"math"
	"math/rand/v2"
	"testing"
)

var (
	wino4BT = [6][6]float64{
		{4, 0, -5, 0, 1, 0},
		{0, -4, -4, 1, 1, 0},
		{0, 4, -4, -1, 1, 0},
		{0, -2, -1, 2, 1, 0},
		{0, 2, -1, -2, 1, 0},
		{0, 4, 0, -5, 0, 1},
	}
	wino4AT = [4][6]float64{
		{1, 1, 1, 1, 1, 0},
		{0, 1, -1, 2, -2, 0},
		{0, 1, 1, 4, 4, 0},
		{0, 1, -1, 8, -8, 1},
	}
)

// TestWinograd4 checks both F(4×4, 3×3) transforms, in Go and with
// AVX-512 where the CPU has it, against the matrix products in float64
// on tile counts around the groups of 16, and the two paths against each
// other bit for bit.
func TestWinograd4(t *testing.T) {
	defer func(v bool) { winograd4AVX512 = v }(winograd4AVX512)
	paths := []bool{false}
	if hasAVX512 {
		paths = append(paths, true)
	}
	for _, n := range []int{1, 9, 15, 16, 17, 37, 74} {
		g := (n + 15) / 16
		lds, ldd := 64*g+19, 16*g+3
		ldm, ldo := 16*g+1, 64*g+7
		rng := rand.New(rand.NewPCG(uint64(n), 4))
		src := randF32(rng, 5*lds+64*g+16)
		m := randF32(rng, 35*ldm+16*g)
		m[ldm+2] = float32(math.NaN())
		const bias = 0.25
		var ins, outs [][]float32
		for _, avx := range paths {
			winograd4AVX512 = avx
			dst := make([]float32, 36*ldd)
			Winograd4Input(src, lds, n, dst, ldd)
			for tile := range n {
				for i := range 6 {
					for j := range 6 {
						var want float64
						for a := range 6 {
							for b := range 6 {
								want += wino4BT[i][a] * float64(src[a*lds+4*tile+b]) * wino4BT[j][b]
							}
						}
						if got := dst[(6*i+j)*ldd+tile]; math.Abs(float64(got)-want) > 1e-4 {
							t.Fatalf("input avx512=%v n=%d tile %d e %d: %g, want %g", avx, n, tile, 6*i+j, got, want)
						}
					}
				}
			}
			out := make([]float32, 3*ldo+64*g)
			Winograd4Output(m, ldm, n, bias, out, ldo)
			for tile := range n {
				for i := range 4 {
					for j := range 4 {
						want := float64(bias)
						for a := range 6 {
							for b := range 6 {
								if c := wino4AT[i][a] * wino4AT[j][b]; c != 0 {
									want += c * float64(m[(6*a+b)*ldm+tile])
								}
							}
						}
						got := float64(out[i*ldo+4*tile+j])
						if math.IsNaN(want) != math.IsNaN(got) || !math.IsNaN(want) && math.Abs(got-math.Max(want, 0)) > 1e-4 {
							t.Fatalf("output avx512=%v n=%d tile %d (%d,%d): %g, want max(%g, 0)", avx, n, tile, i, j, got, want)
						}
					}
				}
			}
			ins, outs = append(ins, dst), append(outs, out)
		}
		for p := 1; p < len(ins); p++ {
			sameBits(t, "input", n, ins[0], ins[p])
			sameBits(t, "output", n, outs[0], outs[p])
		}
	}
}

// sameBits fails unless a and b hold the same bits wherever a tile's
// values are defined (NaN equal to NaN).
func sameBits(t *testing.T, what string, n int, a, b []float32) {
	t.Helper()
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) && !(math.IsNaN(float64(a[i])) && math.IsNaN(float64(b[i]))) {
			t.Fatalf("%s n=%d: value %d is %v in Go, %v with AVX-512", what, n, i, a[i], b[i])
		}
	}
}
