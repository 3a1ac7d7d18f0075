package synth

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// TrainingRun simulates an ensemble of members trained from different
// initialisations and saved at every epoch. Member i's predicted
// distribution at epoch e is N(θ_ie, 0.25 I_d), with θ following a noisy
// gradient flow towards the target mean, θ_ie = θ_i,e-1 + η_e (-κ(θ_i,e-1 - μ) +
// σ ξ_ie), with a learning rate η_e = 0.7^e that decays like a schedule.
// Early epochs wander (low correlation between distant epochs); late
// epochs barely move (variance ≈ covariance between neighbours, the
// regime of Gruber & Buettner's Figure 3 and Example 3.4).
//
// It returns runs[e][i], m samples of member i at epoch e.
func TrainingRun(r *rand.Rand, epochs, members, m, d int) [][]*mat.Dense {
	theta := make([][]float64, members)
	for i := range theta {
		theta[i] = make([]float64, d)
		for j := range theta[i] {
			theta[i][j] = 3 * r.NormFloat64()
		}
	}
	mu := make([]float64, d)
	const kappa, sigma = 0.5, 1.0
	runs := make([][]*mat.Dense, epochs)
	for e := 0; e < epochs; e++ {
		lr := math.Pow(0.7, float64(e))
		for i := range theta {
			for j := range theta[i] {
				theta[i][j] += lr * (-kappa*(theta[i][j]-mu[j]) + sigma*r.NormFloat64())
			}
			runs[e] = append(runs[e], Gaussian(r, m, theta[i], 0.5))
		}
	}
	return runs
}
