package vit

import "github.com/genlens/genlens/internal/simdblas"

// The element-wise steps run in float32 through simdblas.Exp32, as PyTorch's
// vectorised CPU kernels do: float64 math.Exp and math.Erf made them
// a third of the time of a forward pass.

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
		erfc := p * t * simdblas.Exp32(-a*a) // erfc(|z|)
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
		x[i] = v / (1 + simdblas.Exp32(-1.702*v))
	}
}

// swiglu sets a to SiLU(a)·b = a·σ(a)·b, the gate of a SwiGLU FFN.
func swiglu(a, b []float32) {
	b = b[:len(a)]
	for i, v := range a {
		a[i] = v / (1 + simdblas.Exp32(-v)) * b[i]
	}
}
