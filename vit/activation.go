package vit

import "math"

// The element-wise steps run in float32 through exp32, as PyTorch's
// vectorised CPU kernels do: float64 math.Exp and math.Erf made them
// a third of the time of a forward pass.

// exp32 returns e^x to about one unit in the last place (Cephes's expf
// polynomial after the reduction x = k·ln 2 + r, |r| <= ln 2/2); results
// below the smallest normal float32 are 0.
func exp32(x float32) float32 {
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
	k := (x*1.442695041 + magic) - magic
	r := x - k*0.693359375 + k*2.12194440e-4
	p := float32(1.9875691500e-4)
	p = p*r + 1.3981999507e-3
	p = p*r + 8.3334519073e-3
	p = p*r + 4.1665795894e-2
	p = p*r + 1.6666665459e-1
	p = p*r + 5.0000001201e-1
	y := p*r*r + r + 1
	return y * math.Float32frombits(uint32(int32(k)+127)<<23)
}

// gelu is the exact GELU, x·Φ(x) = x/2·(1 + erf(x/√2)), nn.GELU's
// default, with erf as Abramowitz and Stegun's 7.1.26 (absolute error
// below 1.5e-7, the approximation PyTorch's vectorised CPU kernel uses).
// For x < 0 it computes 1 + erf(x/√2) = erfc(|x|/√2) directly, not by
// a cancelling float32 sum, which in the tail would lose more digits
// than the approximation does.
func gelu(x []float32) {
	for i, v := range x {
		z := v * 0.70710678118654752
		a := z
		if a < 0 {
			a = -a
		}
		t := 1 / (1 + 0.3275911*a)
		p := float32(1.061405429)
		p = p*t - 1.453152027
		p = p*t + 1.421413741
		p = p*t - 0.284496736
		p = p*t + 0.254829592
		erfc := p * t * exp32(-a*a) // erfc(|z|)
		if v >= 0 {
			x[i] = 0.5 * v * (2 - erfc)
		} else {
			x[i] = 0.5 * v * erfc
		}
	}
}

// quickGELU is CLIP's x·σ(1.702x).
func quickGELU(x []float32) {
	for i, v := range x {
		x[i] = v / (1 + exp32(-1.702*v))
	}
}

// swiglu sets a to SiLU(a)·b = a·σ(a)·b, the gate of a SwiGLU FFN.
func swiglu(a, b []float32) {
	b = b[:len(a)]
	for i, v := range a {
		a[i] = v / (1 + exp32(-v)) * b[i]
	}
}
