package inception

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestIm2colPanelSame writes the same panels with the same-size path and
// the general one, for each same-size convolution kind of the network
// on the map sizes it runs at, over panels that start and end inside
// output rows and slivers, and wants them equal.
func TestIm2colPanelSame(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for _, tc := range []struct{ kh, kw, hw int }{
		{1, 7, 17}, {7, 1, 17}, {3, 3, 35}, {5, 5, 35}, {1, 3, 8}, {3, 1, 8}, {3, 3, 8}, {3, 3, 5},
	} {
		const cin = 3
		cv := &conv{cin: cin, kh: tc.kh, kw: tc.kw, stride: 1, ph: tc.kh / 2, pw: tc.kw / 2}
		in := fmap{cin, tc.hw, tc.hw, make([]float32, cin*tc.hw*tc.hw)}
		for i := range in.d {
			in.d[i] = float32(rng.NormFloat64())
		}
		k, n := cin*tc.kh*tc.kw, tc.hw*tc.hw
		for _, p := range []struct{ p0, kc, j0, nc, nr int }{
			{0, k, 0, n, 32}, {1, k - 2, 5, n - 9, 32}, {0, k, 3, 40, 16}, {2, 1, n - 7, 7, 32}, {0, k, 0, 1, 32},
		} {
			name := fmt.Sprintf("%dx%d@%d %+v", tc.kh, tc.kw, tc.hw, p)
			size := (p.nc + p.nr - 1) / p.nr * p.kc * p.nr
			want, got := make([]float32, size), make([]float32, size)
			for i := range got {
				want[i], got[i] = -1, -2 // every value must be written
			}
			im2colPanelAny(in, cv, tc.hw, want, p.p0, p.kc, p.j0, p.nc, p.nr)
			im2colPanelSame(in, cv, got, p.p0, p.kc, p.j0, p.nc, p.nr)
			if !slices.Equal(got, want) {
				for i := range got {
					if got[i] != want[i] {
						t.Fatalf("%s: value %d = %v, the general path %v", name, i, got[i], want[i])
					}
				}
			}
		}
	}
}

// TestIm2colPanelValid writes the panels of the network's unpadded
// convolutions (the stride-2 ones and the unpadded stride-1 stem) with
// the unpadded path and the general one, and wants them equal.
func TestIm2colPanelValid(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	for _, tc := range []struct{ kh, kw, stride, hw int }{
		{3, 3, 2, 35}, {3, 3, 2, 17}, {3, 3, 2, 299}, {3, 3, 1, 15}, {1, 1, 2, 17},
	} {
		const cin = 3
		cv := &conv{cin: cin, kh: tc.kh, kw: tc.kw, stride: tc.stride}
		in := fmap{cin, tc.hw, tc.hw, make([]float32, cin*tc.hw*tc.hw)}
		for i := range in.d {
			in.d[i] = float32(rng.NormFloat64())
		}
		wo := outSize(tc.hw, tc.kh, tc.stride, 0)
		k, n := cin*tc.kh*tc.kw, wo*wo
		for _, p := range []struct{ p0, kc, j0, nc, nr int }{
			{0, k, 0, n, 32}, {1, k - 2, 5, n - 9, 32}, {0, k, 3, 40, 16}, {2, 1, n - 7, 7, 32}, {0, k, 0, 1, 32}, {k / 3, k - k/3 - 1, 1, n - 1, 8},
		} {
			name := fmt.Sprintf("%dx%d/%d@%d %+v", tc.kh, tc.kw, tc.stride, tc.hw, p)
			size := (p.nc + p.nr - 1) / p.nr * p.kc * p.nr
			want, got := make([]float32, size), make([]float32, size)
			for i := range got {
				want[i], got[i] = -1, -2 // every value must be written
			}
			im2colPanelAny(in, cv, wo, want, p.p0, p.kc, p.j0, p.nc, p.nr)
			im2colPanelValid(in, cv, wo, got, p.p0, p.kc, p.j0, p.nc, p.nr)
			if !slices.Equal(got, want) {
				for i := range got {
					if got[i] != want[i] {
						t.Fatalf("%s: value %d = %v, the general path %v", name, i, got[i], want[i])
					}
				}
			}
		}
	}
}
