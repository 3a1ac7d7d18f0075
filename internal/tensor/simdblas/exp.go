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

// GELU sets x[i] to the exact GELU, x·Φ(x) = x/2·(1 + erf(x/√2)),
// nn.GELU's default, with erf as Abramowitz and Stegun's 7.1.26
// (absolute error below 1.5e-7, the approximation PyTorch's vectorised
// CPU kernel uses). For x < 0 it computes 1 + erf(x/√2) = erfc(|x|/√2)
// directly, not by a cancelling float32 sum, which in the tail would
// lose more digits than the approximation does. Sixteen values at a time
// where the CPU has AVX-512, with the same bits as the Go loop.
func GELU(x []float32) {
	done := 0
	if expAVX512 && len(x) >= 16 {
		geluAVX512(&x[0], len(x)/16)
		done = len(x) &^ 15
	}
	for i := done; i < len(x); i++ {
		x[i] = gelu(x[i])
	}
}

// gelu is GELU of one value, each product rounded before its sum.
func gelu(v float32) float32 {
	z := v * 0.70710678118654752
	a := z
	if a < 0 {
		a = -a
	}
	t := 1 / (1 + float32(0.3275911*a))
	p := float32(1.061405429)
	p = float32(p*t) - 1.453152027
	p = float32(p*t) + 1.421413741
	p = float32(p*t) - 0.284496736
	p = float32(p*t) + 0.254829592
	erfc := float32(p*t) * Exp32(-a*a) // erfc(|z|)
	if v >= 0 {
		return 0.5 * v * (2 - erfc)
	}
	return 0.5 * v * erfc
}

// MaxInto sets m[i] = max(m[i], x[i]) for i < len(x) (m at least as
// long), as Go's max: NaN wins. Sixteen at a time where the CPU has
// AVX-512; equal zeros of opposite sign may keep either sign there.
func MaxInto(m, x []float32) {
	n := len(x)
	m = m[:n]
	done := 0
	if expAVX512 && n >= 16 {
		maxIntoAVX512(&m[0], &x[0], n/16)
		done = n &^ 15
	}
	for i := done; i < n; i++ {
		m[i] = max(m[i], x[i])
	}
}

// Swish sets a[i] = a[i]·σ(beta·a[i]) = a[i]/(1 + Exp32(−beta·a[i])),
// times b[i] when b is not nil (b at least as long as a): CLIP's
// QuickGELU is beta 1.702, a SwiGLU gate SiLU (beta 1) times b. Sixteen
// values at a time where the CPU has AVX-512, with the same bits as the
// Go loop.
func Swish(a []float32, beta float32, b []float32) {
	n := len(a)
	gated := b != nil
	if gated {
		b = b[:n]
	}
	done := 0
	if expAVX512 && n >= 16 {
		var bp *float32
		if gated {
			bp = &b[0]
		}
		swishAVX512(&a[0], n/16, -beta, bp, gated)
		done = n &^ 15
	}
	for i := done; i < n; i++ {
		v := a[i] / (1 + Exp32(-beta*a[i]))
		if gated {
			v *= b[i]
		}
		a[i] = v
	}
}
