package simdblas

import (
	"math"
	"math/rand/v2"
	"testing"
)

var (
	winoBT = [4][4]float64{{1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}}
	winoAT = [2][4]float64{{1, 1, 1, 0}, {0, 1, -1, -1}}
)

// TestWinograd checks both transforms, in Go and with AVX-512 where the
// CPU has it, against the matrix products in float64, on tile counts
// around the groups of 16.
func TestWinograd(t *testing.T) {
	defer func(v bool) { winogradAVX512 = v }(winogradAVX512)
	paths := []bool{false}
	if hasAVX512 {
		paths = append(paths, true)
	}
	rng := rand.New(rand.NewPCG(5, 5))
	for _, avx := range paths {
		winogradAVX512 = avx
		for _, n := range []int{1, 15, 16, 17, 37, 74} {
			g := (n + 15) / 16
			lds, ldd := 32*g+5, 16*g+3
			src := randF32(rng, 3*lds+32*g+2)
			dst := make([]float32, 16*ldd)
			WinogradInput(src, lds, n, dst, ldd)
			for tile := range n {
				for i := range 4 {
					for j := range 4 {
						// (Bᵀ d B)[i][j] = Σ Bᵀ[i][a] d[a][b] Bᵀ[j][b].
						var want float64
						for a := range 4 {
							for b := range 4 {
								want += winoBT[i][a] * float64(src[a*lds+2*tile+b]) * winoBT[j][b]
							}
						}
						if got := dst[(4*i+j)*ldd+tile]; math.Abs(float64(got)-want) > 1e-5 {
							t.Fatalf("input avx512=%v n=%d tile %d e %d: %g, want %g", avx, n, tile, 4*i+j, got, want)
						}
					}
				}
			}
			ldm, ldo := 16*g+1, 32*g+7
			m := randF32(rng, 15*ldm+16*g)
			m[3] = float32(math.NaN())
			out := make([]float32, ldo+32*g)
			const bias = 0.25
			WinogradOutput(m, ldm, n, bias, out, ldo)
			for tile := range n {
				for i := range 2 {
					for j := range 2 {
						want := float64(bias)
						for a := range 4 {
							for b := range 4 {
								if c := winoAT[i][a] * winoAT[j][b]; c != 0 {
									want += c * float64(m[(4*a+b)*ldm+tile])
								}
							}
						}
						got := float64(out[i*ldo+2*tile+j])
						if math.IsNaN(want) != math.IsNaN(got) || !math.IsNaN(want) && math.Abs(got-math.Max(want, 0)) > 1e-5 {
							t.Fatalf("output avx512=%v n=%d tile %d (%d,%d): %g, want max(%g, 0)", avx, n, tile, i, j, got, want)
						}
					}
				}
			}
		}
	}
}
