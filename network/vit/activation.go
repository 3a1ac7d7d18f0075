package vit

import "github.com/genlens/genlens/internal/tensor/simdblas"

// The element-wise steps run in float32 through simdblas.Exp32, as
// PyTorch's vectorised CPU kernels do (float64 math.Exp and math.Erf made
// them a third of the time of a forward pass), sixteen values at a time
// where the CPU has AVX-512.

// gelu is the exact GELU, nn.GELU's default (simdblas.GELU).
func gelu(x []float32) { simdblas.GELU(x) }

// quickGELU is CLIP's x·σ(1.702x).
func quickGELU(x []float32) { simdblas.Swish(x, 1.702, nil) }

// swiglu sets a to SiLU(a)·b = a·σ(a)·b, the gate of a SwiGLU FFN.
func swiglu(a, b []float32) { simdblas.Swish(a, 1, b) }
