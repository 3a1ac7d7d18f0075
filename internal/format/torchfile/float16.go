package torchfile

import "math"

// gopickle 0.2.0 converts float16 subnormals wrongly (0x0110, 1.6e-5,
// becomes 7.7e-5), and OpenAI's float16 CLIP weights have many: every
// half-precision value genlens reads (here, and the F16 tensors of
// safetensors files) goes through Float16.

// Float16 converts an IEEE 754 half-precision value to float32, exactly
// (subnormals, infinities and NaN included).
func Float16(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	frac := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f: // Inf, NaN
		return math.Float32frombits(sign | 0xff<<23 | frac<<13)
	case exp == 0 && frac == 0:
		return math.Float32frombits(sign)
	case exp == 0: // subnormal: normalise
		e := uint32(127 - 15 + 1)
		for frac&0x400 == 0 {
			frac <<= 1
			e--
		}
		return math.Float32frombits(sign | e<<23 | (frac&0x3ff)<<13)
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | frac<<13)
}
