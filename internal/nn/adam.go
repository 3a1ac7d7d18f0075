package nn

import "math"

// Adam is the Adam optimiser (Kingma & Ba, 2015) with PyTorch's semantics
// (torch.optim.Adam, amsgrad off): weight decay is an L2 penalty added to
// the gradient before the moment updates, g <- g + WeightDecay θ, unlike
// AdamW's decoupled decay; the bias-corrected step is
//
//	θ <- θ - LR m̂ / (sqrt(v̂) + Eps),  m̂ = m / (1 - Beta1^t),  v̂ = v / (1 - Beta2^t).
type Adam struct {
	LR, Beta1, Beta2, Eps, WeightDecay float64

	m, v []float64
	t    int
}

// NewAdam returns an optimiser for n parameters with PyTorch's default
// betas (0.9, 0.999) and eps 1e-8.
func NewAdam(n int, lr, weightDecay float64) *Adam {
	return &Adam{LR: lr, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: weightDecay,
		m: make([]float64, n), v: make([]float64, n)}
}

// Steps returns the number of steps taken.
func (a *Adam) Steps() int { return a.t }

// Step updates params in place from their gradient grad (same length as
// the optimiser). grad is left unchanged.
func (a *Adam) Step(params, grad []float64) {
	if len(params) != len(a.m) || len(grad) != len(a.m) {
		panic("nn: Adam.Step: parameter and gradient lengths must match the optimiser")
	}
	a.t++
	b1, b2 := a.Beta1, a.Beta2
	bc1 := 1 - math.Pow(b1, float64(a.t))
	bc2 := 1 - math.Pow(b2, float64(a.t))
	// As PyTorch: denom = sqrt(v)/sqrt(bc2) + eps, step = lr/bc1.
	step := a.LR / bc1
	rbc2 := 1 / math.Sqrt(bc2)
	wd := a.WeightDecay
	m, v := a.m, a.v
	for i, g := range grad {
		if wd != 0 {
			g += wd * params[i]
		}
		m[i] = b1*m[i] + (1-b1)*g
		v[i] = b2*v[i] + (1-b2)*g*g
		params[i] -= step * m[i] / (math.Sqrt(v[i])*rbc2 + a.Eps)
	}
}
