package simdblas

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestWinograd1D checks both one-dimensional transforms, in Go and with
// AVX-512 where the CPU has it, against their sums in float64 for
// every number of points, on tile counts around the groups of 16 and
// offsets that run along rows and down columns, and the two paths
// against each other bit for bit.
func TestWinograd1D(t *testing.T) {
	defer func(v bool) { winograd1dAVX512 = v }(winograd1dAVX512)
	paths := []bool{false}
	if hasAVX512 {
		paths = append(paths, true)
	}
	for _, c := range []struct{ a, mo, n, step int }{
		{4, 2, 1, 1}, {6, 4, 16, 1}, {8, 2, 17, 19}, {10, 4, 85, 17}, {12, 6, 37, 1}, {4, 3, 33, 5}, {8, 5, 15, 1},
	} {
		g := (c.n + 15) / 16
		rng := rand.New(rand.NewPCG(uint64(c.a), uint64(c.n)))
		// Tiles are scattered over a plane with room for every tap:
		// offsets are distinct multiples of mo·step apart so that the
		// outputs of distinct tiles do not overlap.
		step := c.step
		span := c.a * step
		perm := rng.Perm(16 * g)
		if step > 1 {
			// Tiles side by side, every tap a row of the plane further
			// (the kernels load and store such groups), but for the
			// first two, swapped, whose group is gathered.
			step += 16 * g
			span, perm = 1, nil
		}
		off := make([]int32, 16*g)
		for j := range off {
			off[j] = int32(j)
			if perm != nil {
				off[j] = int32(perm[j]*span + rng.IntN(step))
			}
		}
		if perm == nil && g > 1 {
			off[0], off[1] = off[1], off[0]
		}
		src := randF32(rng, 16*g*c.a*step+c.a*step)
		bt, at := symmetric1D(rng, c.a, c.mo)
		ldd, ldm := 16*g+3, 16*g+5
		m := randF32(rng, c.a*ldm)
		m[ldm+2] = float32(math.NaN()) // s₊ of tile 2, in every output
		const bias = -0.25
		var ins, outs [][]float32
		for _, avx := range paths {
			winograd1dAVX512 = avx
			dst := make([]float32, c.a*ldd)
			Winograd1DInput(bt, c.a, src, off, step, c.n, dst, ldd)
			out := make([]float32, len(src))
			Winograd1DOutput(at, c.a, c.mo, m, ldm, off, step, c.n, bias, out)
			for j := range c.n {
				for e := range c.a {
					var want float64
					for k := range c.a {
						want += float64(bt[e*c.a+k]) * float64(src[int(off[j])+k*step])
					}
					if got := dst[e*ldd+j]; math.Abs(float64(got)-want) > 1e-5*(1+math.Abs(want)) {
						t.Fatalf("input avx512=%v %+v tile %d e %d: %g, want %g", avx, c, j, e, got, want)
					}
				}
				for i := range c.mo {
					var want float64
					for e := range c.a {
						want += float64(at[i*c.a+e]) * float64(m[e*ldm+j])
					}
					want = max(want+bias, 0)
					got := out[int(off[j])+i*step]
					if j == 2 {
						if !math.IsNaN(float64(got)) {
							t.Fatalf("output avx512=%v %+v tile 2: %g, want NaN", avx, c, got)
						}
						continue
					}
					if math.Abs(float64(got)-want) > 1e-5*(1+math.Abs(want)) {
						t.Fatalf("output avx512=%v %+v tile %d i %d: %g, want %g", avx, c, j, i, got, want)
					}
				}
			}
			// Nothing but the outputs is written.
			written := 0
			for _, v := range out {
				if v != 0 || math.Signbit(float64(v)) {
					written++
				}
			}
			if limit := c.n * c.mo; written > limit {
				t.Fatalf("output avx512=%v %+v: %d values written, at most %d", avx, c, written, limit)
			}
			ins, outs = append(ins, dst[:]), append(outs, out)
		}
		for p := 1; p < len(paths); p++ {
			for e := range c.a {
				if !slices.Equal(bits(ins[0][e*ldd:e*ldd+c.n]), bits(ins[p][e*ldd:e*ldd+c.n])) {
					t.Fatalf("%+v: input element %d differs between Go and AVX-512", c, e)
				}
			}
			if !slices.Equal(bits(outs[0]), bits(outs[p])) {
				t.Fatalf("%+v: outputs differ between Go and AVX-512", c)
			}
		}
	}
}

// symmetric1D returns random Bᵀ and Aᵀ of the symmetric form of the
// points 0, ±p_1, …, ±p_q, ∞ (see winograd1d.go).
func symmetric1D(rng *rand.Rand, a, mo int) (bt, at []float32) {
	bt, at = randF32(rng, a*a), randF32(rng, mo*a)
	for k := range a {
		odd := k%2 == 1
		if odd {
			bt[k] = 0 // row 0: even columns
		} else {
			bt[(a-1)*a+k] = 0 // row ∞: odd columns
		}
		for e := 1; e < a-1; e += 2 {
			if k == a-1 {
				bt[e*a+k] = 0
			}
			bt[(e+1)*a+k] = bt[e*a+k]
			if odd {
				bt[(e+1)*a+k] = -bt[e*a+k]
			}
		}
	}
	for i := range mo {
		if i%2 == 1 {
			at[i*a] = 0
		}
		if i != mo-1 {
			at[i*a+a-1] = 0
		}
		for e := 1; e < a-1; e += 2 {
			at[i*a+e+1] = at[i*a+e]
			if i%2 == 1 {
				at[i*a+e+1] = -at[i*a+e]
			}
		}
	}
	return bt, at
}

func bits(x []float32) []uint32 {
	b := make([]uint32, len(x))
	for i, v := range x {
		b[i] = math.Float32bits(v)
	}
	return b
}

// BenchmarkWinograd1D runs the transforms of one channel plane (input)
// or output plane of a 1×7 layer of Mixed_6 in F(4, 7): 85 tiles of ten
// points on a 17×17 map.
func BenchmarkWinograd1D(b *testing.B) {
	const a, mo, n, tw, pw = 10, 4, 85, 5, 26
	rng := rand.New(rand.NewPCG(1, 2))
	bt, at := symmetric1D(rng, a, mo)
	src := randF32(rng, 17*pw)
	off := make([]int32, 96)
	offOut := make([]int32, 96)
	for j := range n {
		off[j], offOut[j] = int32(j/tw*pw+j%tw*mo), int32(mo*j)
	}
	dst := make([]float32, a*96)
	out := make([]float32, 17*20)
	b.Run("input", func(b *testing.B) {
		for b.Loop() {
			Winograd1DInput(bt, a, src, off, 1, n, dst, 96)
		}
	})
	b.Run("output", func(b *testing.B) {
		for b.Loop() {
			Winograd1DOutput(at, a, mo, dst, 96, offOut, 1, n, 0.5, out)
		}
	})
}
