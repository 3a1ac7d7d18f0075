package synth

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// GaussianEnsemble is a two-level model of an ensemble: member i predicts
// P_i = N(θ_i, S² I_d) with θ_i ~ N(Mu, Tau² I_d) (training randomness);
// the target is Q = N(Nu, R² I_d). Under the RBF kernel exp(-γ||x-y||²)
// every term of the kernel-score decomposition has a closed form.
type GaussianEnsemble struct {
	Mu, Nu    []float64
	S, Tau, R float64
}

// Sample draws n members with m samples each, and l target observations.
func (g GaussianEnsemble) Sample(r *rand.Rand, n, m, l int) (members []*mat.Dense, targets *mat.Dense) {
	d := len(g.Mu)
	for i := 0; i < n; i++ {
		theta := make([]float64, d)
		for j := range theta {
			theta[j] = g.Mu[j] + g.Tau*r.NormFloat64()
		}
		members = append(members, Gaussian(r, m, theta, g.S))
	}
	return members, Gaussian(r, l, g.Nu, g.R)
}

// Gaussian draws m rows of N(mean, s² I).
func Gaussian(r *rand.Rand, m int, mean []float64, s float64) *mat.Dense {
	x := mat.NewDense(m, len(mean), nil)
	for i := 0; i < m; i++ {
		row := x.RawRowView(i)
		for j, mu := range mean {
			row[j] = mu + s*r.NormFloat64()
		}
	}
	return x
}

// Truth holds the exact decomposition terms under the RBF kernel.
type Truth struct{ Noise, Bias, Variance, KernelScore, KernelEntropy float64 }

// Truth returns the exact terms for the RBF kernel with parameter gamma,
// from <N(a, v1 I), N(b, v2 I)> = (1 + 2γ(v1+v2))^(-d/2) exp(-γ||a-b||² / (1 + 2γ(v1+v2))).
func (g GaussianEnsemble) Truth(gamma float64) Truth {
	d := float64(len(g.Mu))
	inner := func(dist2, v1, v2 float64) float64 {
		c := 1 + 2*gamma*(v1+v2)
		return math.Pow(c, -d/2) * math.Exp(-gamma*dist2/c)
	}
	var dmn float64
	for i := range g.Mu {
		dmn += (g.Mu[i] - g.Nu[i]) * (g.Mu[i] - g.Nu[i])
	}
	s2, t2, r2 := g.S*g.S, g.Tau*g.Tau, g.R*g.R
	var t Truth
	member := inner(0, s2, s2)        // E||P_i||²
	mixture := inner(0, s2+t2, s2+t2) // ||E P||², E P = N(Mu, (S²+Tau²) I)
	t.Variance = member - mixture
	t.Noise = -inner(0, r2, r2)
	t.Bias = mixture - 2*inner(dmn, s2+t2, r2) + inner(0, r2, r2)
	t.KernelScore = t.Noise + t.Bias + t.Variance
	t.KernelEntropy = -member
	return t
}
