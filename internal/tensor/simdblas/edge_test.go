package simdblas

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestEdgeKernel checks the AVX-512 edge kernel against the full 12×32
// kernels on the same packed inputs: every entry inside rows × cols has
// the bits the full kernel gives it, in each mode (C + alpha·A·B,
// bias + A·B, with and without the clamp), and nothing outside is read
// into the result or written.
func TestEdgeKernel(t *testing.T) {
	if !hasAVX512 {
		t.Skip("no AVX-512")
	}
	kn := sgemmAVX512
	rng := rand.New(rand.NewPCG(5, 6))
	const ldc = 40
	for _, k := range []int{1, 3, 64} {
		for rows := 1; rows <= kn.mr; rows++ {
			for cols := 1; cols <= kn.nr; cols++ {
				a := randF32(rng, k*kn.mr)
				for p := range k {
					clear(a[p*kn.mr+rows : (p+1)*kn.mr])
				}
				b := randF32(rng, k*kn.nr)
				for p := range k {
					clear(b[p*kn.nr+cols : (p+1)*kn.nr])
				}
				c0 := randF32(rng, kn.mr*ldc)
				c0[0] = float32(math.NaN())
				bias := randF32(rng, kn.mr)
				for _, mode := range []struct {
					bias  bool
					alpha float32
					relu  bool
				}{{false, 1, false}, {false, -0.7, true}, {true, 1, false}, {true, 1, true}} {
					name := fmt.Sprintf("k=%d rows=%d cols=%d bias=%v alpha=%g relu=%v", k, rows, cols, mode.bias, mode.alpha, mode.relu)
					want := append([]float32(nil), c0...)
					got := append([]float32(nil), c0...)
					var bp *float32
					if mode.bias {
						bp = &bias[0]
						kn.microBias(k, &a[0], &b[0], &want[0], ldc, bp, mode.relu)
					} else {
						kn.micro(k, &a[0], &b[0], &want[0], ldc, mode.alpha, mode.relu)
					}
					kn.microEdge(k, &a[0], &b[0], &got[0], ldc, bp, rows, cols, mode.alpha, mode.relu)
					for r := range kn.mr {
						for j := range ldc {
							i := r*ldc + j
							w := want[i]
							if r >= rows || j >= cols {
								w = c0[i]
							}
							if g := got[i]; g != w && !(g != g && w != w) {
								t.Fatalf("%s: C[%d][%d] = %g, want %g", name, r, j, g, w)
							}
						}
					}
				}
			}
		}
	}
}
