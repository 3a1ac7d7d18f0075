package simdblas

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestGatherRows32 runs GatherRows32 in Go and with AVX-512 on random
// masks whose clear bits point outside the source, against the
// definition.
func TestGatherRows32(t *testing.T) {
	defer func(v bool) { gatherAVX512 = v }(gatherAVX512)
	paths := []bool{false}
	if hasAVX512 {
		paths = append(paths, true)
	}
	rng := rand.New(rand.NewPCG(3, 3))
	src := randF32(rng, 1000)
	for _, ntap := range []int{1, 3, 7} {
		for _, rows := range []int{1, 5, 22} {
			tapOff := make([]int, ntap)
			tapMask := make([]uint32, ntap)
			base, step, tap0 := 40, 90, ntap/2
			for k := range tapOff {
				tapOff[k] = rng.IntN(81) - 40
				for q := range 32 {
					// Set only bits that read inside src, and not all.
					blocks := (tap0 + rows) / ntap
					lo, hi := base+tapOff[k]+q, base+blocks*step+tapOff[k]+q
					if lo >= 0 && hi < len(src) && rng.IntN(4) != 0 {
						tapMask[k] |= 1 << q
					}
				}
			}
			for _, avx := range paths {
				gatherAVX512 = avx
				dst := randF32(rng, 32*rows)
				GatherRows32(dst, rows, src, base, step, tap0, tapOff, tapMask)
				for r := range rows {
					tap, b := (tap0+r)%ntap, (tap0+r)/ntap
					for q := range 32 {
						want := float32(0)
						if tapMask[tap]&(1<<q) != 0 {
							want = src[base+b*step+tapOff[tap]+q]
						}
						if got := dst[32*r+q]; math.Float32bits(got) != math.Float32bits(want) {
							t.Fatalf("avx512=%v ntap=%d rows=%d: dst[%d][%d] = %v, want %v", avx, ntap, rows, r, q, got, want)
						}
					}
				}
			}
		}
	}
}

// TestGatherIdx32 runs GatherIdx32 in Go and with AVX-512, for full and
// short slivers, against the definition.
func TestGatherIdx32(t *testing.T) {
	defer func(v bool) { gatherAVX512 = v }(gatherAVX512)
	paths := []bool{false}
	if hasAVX512 {
		paths = append(paths, true)
	}
	rng := rand.New(rand.NewPCG(4, 4))
	src := randF32(rng, 3000)
	for _, ntap := range []int{1, 3, 9} {
		for _, rows := range []int{1, 5, 22} {
			for _, cnt := range []int{1, 17, 31, 32} {
				base, step, tap0 := 30, 70, ntap/2
				tapOff := make([]int, ntap)
				for k := range tapOff {
					tapOff[k] = rng.IntN(61) - 30
				}
				idx := make([]int32, cnt)
				for q := range idx {
					idx[q] = int32(rng.IntN(500))
				}
				for _, avx := range paths {
					gatherAVX512 = avx
					dst := randF32(rng, 32*rows)
					GatherIdx32(dst, rows, src, base, step, tap0, tapOff, idx)
					for r := range rows {
						tap, b := (tap0+r)%ntap, (tap0+r)/ntap
						for q := range 32 {
							want := float32(0)
							if q < cnt {
								want = src[base+b*step+tapOff[tap]+int(idx[q])]
							}
							if got := dst[32*r+q]; math.Float32bits(got) != math.Float32bits(want) {
								t.Fatalf("avx512=%v ntap=%d rows=%d cnt=%d: dst[%d][%d] = %v, want %v", avx, ntap, rows, cnt, r, q, got, want)
							}
						}
					}
				}
			}
		}
	}
}
