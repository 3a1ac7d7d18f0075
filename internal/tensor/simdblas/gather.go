package simdblas

// gatherAVX512 selects the AVX-512 kernel of GatherRows32; the tests
// clear it to run the Go loop.
var gatherAVX512 = hasAVX512

// GatherRows32 writes rows 32-value rows of a packed panel sliver from a
// source with a repeating pattern of offsets, as a convolution's im2col
// rows are its input planes seen through each tap: row r (r < rows), with
// tap = (tap0+r) mod len(tapOff) and block b = (tap0+r) div len(tapOff),
// is dst[32r+q] = src[base + b·step + tapOff[tap] + q] where bit q of
// tapMask[tap] is set, and 0 where it is not (q < 32). Only the values of
// set bits are read, so an offset may point outside src where its mask
// is clear; where it is set, the index must lie in src.
func GatherRows32(dst []float32, rows int, src []float32, base, step, tap0 int, tapOff []int, tapMask []uint32) {
	ntap := len(tapOff)
	if rows <= 0 {
		return
	}
	if len(tapMask) != ntap || tap0 < 0 || tap0 >= ntap {
		panic("simdblas: GatherRows32 taps do not match")
	}
	_ = dst[32*rows-1]
	if gatherAVX512 && len(src) > 0 {
		gatherRows32AVX512(&dst[0], rows, &src[0], base, step, ntap, tap0, &tapOff[0], &tapMask[0])
		return
	}
	tap := tap0
	for r := range rows {
		d := dst[32*r : 32*r+32]
		o, m := base+tapOff[tap], tapMask[tap]
		for q := range d {
			if m&(1<<q) != 0 {
				d[q] = src[o+q]
			} else {
				d[q] = 0
			}
		}
		if tap++; tap == ntap {
			tap, base = 0, base+step
		}
	}
}

// GatherIdx32 writes rows 32-value rows of a packed panel sliver whose
// columns are scattered over the source, as the im2col rows of an
// unpadded strided convolution are: with tap and block as in
// GatherRows32, row r is dst[32r+q] = src[base + b·step + tapOff[tap] +
// idx[q]] for q < len(idx) <= 32, and 0 past len(idx). Every index must
// lie in src.
func GatherIdx32(dst []float32, rows int, src []float32, base, step, tap0 int, tapOff []int, idx []int32) {
	ntap, cnt := len(tapOff), len(idx)
	if rows <= 0 {
		return
	}
	if tap0 < 0 || tap0 >= ntap || cnt == 0 || cnt > 32 {
		panic("simdblas: GatherIdx32 taps or columns out of range")
	}
	_ = dst[32*rows-1]
	if gatherAVX512 {
		// The kernel reads no index past cnt; the array is its own so
		// that a short idx need not be padded by the caller.
		var ix [32]int32
		copy(ix[:], idx)
		gatherIdx32AVX512(&dst[0], rows, &src[0], base, step, ntap, tap0, &tapOff[0], &ix, cnt)
		return
	}
	tap := tap0
	for r := range rows {
		d := dst[32*r : 32*r+32]
		s := src[base+tapOff[tap]:]
		for q, o := range idx {
			d[q] = s[o]
		}
		clear(d[cnt:])
		if tap++; tap == ntap {
			tap, base = 0, base+step
		}
	}
}
