package jpeg

// The inverse DCT is libjpeg's accurate integer one (jidctint.c, the
// Loeffler–Ligtenberg–Moschytz factorisation with 13-bit constants), which
// libjpeg-turbo uses for JDCT_ISLOW; its SIMD versions give the same
// numbers for every coefficient a real encoder produces. The order of the
// operations and every rounding below follow it, because the output must
// match to the bit.

const (
	constBits = 13
	pass1Bits = 2

	fix0298631336 = 2446  // FIX(0.298631336)
	fix0390180644 = 3196  // FIX(0.390180644)
	fix0541196100 = 4433  // FIX(0.541196100)
	fix0765366865 = 6270  // FIX(0.765366865)
	fix0899976223 = 7373  // FIX(0.899976223)
	fix1175875602 = 9633  // FIX(1.175875602)
	fix1501321110 = 12299 // FIX(1.501321110)
	fix1847759065 = 15137 // FIX(1.847759065)
	fix1961570560 = 16069 // FIX(1.961570560)
	fix2053119869 = 16819 // FIX(2.053119869)
	fix2562915447 = 20995 // FIX(2.562915447)
	fix3072711026 = 25172 // FIX(3.072711026)
)

// clamp8 adds back the level shift and limits to [0, 255]. libjpeg-turbo's
// SIMD IDCT saturates like this; its C version wraps values beyond ±512,
// which no valid file reaches.
func clamp8(v int) uint8 {
	v += 128
	if uint(v) > 255 {
		if v < 0 {
			return 0
		}
		return 255
	}
	return uint8(v)
}

// idct dequantizes the coefficients blk (natural order) with q, transforms
// them and writes the 8×8 samples to dst with the given row stride.
func idct(dst []byte, stride int, blk *[64]int16, q *[64]int32) {
	var ws [64]int32

	// Pass 1: columns, keeping pass1Bits extra bits of precision.
	for c := 0; c < 8; c++ {
		if blk[8+c]|blk[16+c]|blk[24+c]|blk[32+c]|blk[40+c]|blk[48+c]|blk[56+c] == 0 {
			// Only the DC term: the column is flat.
			dc := int32(blk[c]) * q[c] << pass1Bits
			ws[c], ws[8+c], ws[16+c], ws[24+c] = dc, dc, dc, dc
			ws[32+c], ws[40+c], ws[48+c], ws[56+c] = dc, dc, dc, dc
			continue
		}
		// Even part.
		z2 := int(blk[16+c]) * int(q[16+c])
		z3 := int(blk[48+c]) * int(q[48+c])
		z1 := (z2 + z3) * fix0541196100
		tmp2 := z1 + z3*-fix1847759065
		tmp3 := z1 + z2*fix0765366865
		z2 = int(blk[c]) * int(q[c])
		z3 = int(blk[32+c]) * int(q[32+c])
		tmp0 := (z2 + z3) << constBits
		tmp1 := (z2 - z3) << constBits
		tmp10 := tmp0 + tmp3
		tmp13 := tmp0 - tmp3
		tmp11 := tmp1 + tmp2
		tmp12 := tmp1 - tmp2

		// Odd part.
		tmp0 = int(blk[56+c]) * int(q[56+c])
		tmp1 = int(blk[40+c]) * int(q[40+c])
		tmp2 = int(blk[24+c]) * int(q[24+c])
		tmp3 = int(blk[8+c]) * int(q[8+c])
		z1 = tmp0 + tmp3
		z2 = tmp1 + tmp2
		z3 = tmp0 + tmp2
		z4 := tmp1 + tmp3
		z5 := (z3 + z4) * fix1175875602
		tmp0 *= fix0298631336
		tmp1 *= fix2053119869
		tmp2 *= fix3072711026
		tmp3 *= fix1501321110
		z1 *= -fix0899976223
		z2 *= -fix2562915447
		z3 *= -fix1961570560
		z4 *= -fix0390180644
		z3 += z5
		z4 += z5
		tmp0 += z1 + z3
		tmp1 += z2 + z4
		tmp2 += z2 + z3
		tmp3 += z1 + z4

		const sh = constBits - pass1Bits
		const rnd = 1 << (sh - 1)
		ws[c] = int32((tmp10 + tmp3 + rnd) >> sh)
		ws[56+c] = int32((tmp10 - tmp3 + rnd) >> sh)
		ws[8+c] = int32((tmp11 + tmp2 + rnd) >> sh)
		ws[48+c] = int32((tmp11 - tmp2 + rnd) >> sh)
		ws[16+c] = int32((tmp12 + tmp1 + rnd) >> sh)
		ws[40+c] = int32((tmp12 - tmp1 + rnd) >> sh)
		ws[24+c] = int32((tmp13 + tmp0 + rnd) >> sh)
		ws[32+c] = int32((tmp13 - tmp0 + rnd) >> sh)
	}

	// Pass 2: rows, removing the pass-1 scaling and the factor of 8.
	for r := 0; r < 8; r++ {
		w := (*[8]int32)(ws[r*8:])
		out := (*[8]byte)(dst[r*stride:])
		if w[1]|w[2]|w[3]|w[4]|w[5]|w[6]|w[7] == 0 {
			const sh = pass1Bits + 3
			v := clamp8(int((w[0] + 1<<(sh-1)) >> sh))
			*out = [8]byte{v, v, v, v, v, v, v, v}
			continue
		}
		z2 := int(w[2])
		z3 := int(w[6])
		z1 := (z2 + z3) * fix0541196100
		tmp2 := z1 + z3*-fix1847759065
		tmp3 := z1 + z2*fix0765366865
		tmp0 := (int(w[0]) + int(w[4])) << constBits
		tmp1 := (int(w[0]) - int(w[4])) << constBits
		tmp10 := tmp0 + tmp3
		tmp13 := tmp0 - tmp3
		tmp11 := tmp1 + tmp2
		tmp12 := tmp1 - tmp2

		tmp0 = int(w[7])
		tmp1 = int(w[5])
		tmp2 = int(w[3])
		tmp3 = int(w[1])
		z1 = tmp0 + tmp3
		z2 = tmp1 + tmp2
		z3 = tmp0 + tmp2
		z4 := tmp1 + tmp3
		z5 := (z3 + z4) * fix1175875602
		tmp0 *= fix0298631336
		tmp1 *= fix2053119869
		tmp2 *= fix3072711026
		tmp3 *= fix1501321110
		z1 *= -fix0899976223
		z2 *= -fix2562915447
		z3 *= -fix1961570560
		z4 *= -fix0390180644
		z3 += z5
		z4 += z5
		tmp0 += z1 + z3
		tmp1 += z2 + z4
		tmp2 += z2 + z3
		tmp3 += z1 + z4

		const sh = constBits + pass1Bits + 3
		const rnd = 1 << (sh - 1)
		out[0] = clamp8((tmp10 + tmp3 + rnd) >> sh)
		out[7] = clamp8((tmp10 - tmp3 + rnd) >> sh)
		out[1] = clamp8((tmp11 + tmp2 + rnd) >> sh)
		out[6] = clamp8((tmp11 - tmp2 + rnd) >> sh)
		out[2] = clamp8((tmp12 + tmp1 + rnd) >> sh)
		out[5] = clamp8((tmp12 - tmp1 + rnd) >> sh)
		out[3] = clamp8((tmp13 + tmp0 + rnd) >> sh)
		out[4] = clamp8((tmp13 - tmp0 + rnd) >> sh)
	}
}

// idctDC is idct for a block whose AC coefficients are all zero: both
// passes take their flat shortcut, so every sample is the same.
func idctDC(dst []byte, stride int, dc int16, q int32) {
	const sh = pass1Bits + 3
	v := clamp8(int((int32(dc)*q<<pass1Bits + 1<<(sh-1)) >> sh))
	row := [8]byte{v, v, v, v, v, v, v, v}
	for r := 0; r < 8; r++ {
		*(*[8]byte)(dst[r*stride:]) = row
	}
}
