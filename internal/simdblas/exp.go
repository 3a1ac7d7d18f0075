package simdblas

import "math"

// expAVX512 selects the AVX-512 kernel of SoftmaxExp; the tests clear it
// to run the Go loop on the same inputs.
var expAVX512 = hasAVX512

// Exp32 returns e^x to about one unit in the last place (Cephes's expf
// polynomial after the reduction x = k·ln 2 + r, |r| <= ln 2/2); results
// below the smallest normal float32 are 0. Every product is rounded to
// float32 before its sum (the explicit conversions forbid the compiler a
// fused multiply-add), so the vector kernels, which multiply and add in
// separate instructions, give the same bits.
func Exp32(x float32) float32 {
	switch {
	case x < -87.33654:
		return 0
	case x > 88.3:
		return float32(math.Inf(1))
	case x != x:
		return x
	}
	// Adding 1.5·2²³ rounds x/ln 2 to the nearest integer.
	const magic = 12582912
	k := (float32(x*1.442695041) + magic) - magic
	r := (x - float32(k*0.693359375)) + float32(k*2.12194440e-4)
	p := float32(1.9875691500e-4)
	p = float32(p*r) + 1.3981999507e-3
	p = float32(p*r) + 8.3334519073e-3
	p = float32(p*r) + 4.1665795894e-2
	p = float32(p*r) + 1.6666665459e-1
	p = float32(p*r) + 5.0000001201e-1
	y := (float32(float32(p*r)*r) + r) + 1
	return y * math.Float32frombits(uint32(int32(k)+127)<<23)
}

// SoftmaxExp is the exponential step of a softmax taken down columns:
// it sets x[i] = Exp32(x[i] − m[i]) and adds the result, in float64, to
// sum[i], for i < len(x) (m and sum at least as long). Sixteen columns
// at a time where the CPU has AVX-512, with the same bits as the Go loop.
func SoftmaxExp(x, m []float32, sum []float64) {
	n := len(x)
	m, sum = m[:n], sum[:n]
	done := 0
	if expAVX512 && n >= 16 {
		softmaxExpAVX512(&x[0], &m[0], &sum[0], n/16)
		done = n &^ 15
	}
	for i := done; i < n; i++ {
		e := Exp32(x[i] - m[i])
		x[i] = e
		sum[i] += float64(e)
	}
}
