package kscore_test

import (
	"fmt"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/internal/demo/synth"
	"github.com/genlens/genlens/metric/kernel"
	"github.com/genlens/genlens/metric/kscore"
)

// Kernel entropy of one prompt's sampled answers, embedded as vectors:
// answers that agree give an entropy near -1, scattered ones near 0.
func ExampleEntropy() {
	agree := mat.NewDense(3, 2, []float64{1, 0, 1, 0.1, 0.9, 0})
	scatter := mat.NewDense(3, 2, []float64{1, 0, -3, 2, 0, -4})
	k := kernel.RBF{Gamma: 0.5}
	fmt.Printf("agreeing samples:  %.3f\n", kscore.Entropy(k, agree))
	fmt.Printf("scattered samples: %.3f\n", kscore.Entropy(k, scatter))
	// Output:
	// agreeing samples:  -0.993
	// scattered samples: -0.000
}

// Decompose an ensemble's expected kernel score into noise, bias and
// variance from samples alone, and predict the gain of averaging it.
func ExampleDecompose() {
	r := rand.New(rand.NewPCG(1, 2))
	ens := synth.GaussianEnsemble{Mu: []float64{0, 0}, Nu: []float64{1, 0}, S: 1, Tau: 0.5, R: 1}
	members, targets := ens.Sample(r, 200, 20, 1000)
	d, err := kscore.Decompose(kernel.RBF{Gamma: 0.5}, members, targets)
	if err != nil {
		panic(err)
	}
	truth := ens.Truth(0.5)
	fmt.Printf("bias     %.3f (exact %.3f)\n", d.Bias, truth.Bias)
	fmt.Printf("variance %.3f (exact %.3f)\n", d.Variance, truth.Variance)
	fmt.Printf("score - noise - bias - variance = %.0e\n", d.IdentityGap)
	fmt.Printf("gain of averaging the %d members: %.3f\n", d.Models, d.EnsembleGain)
	// Output:
	// bias     0.092 (exact 0.091)
	// variance 0.042 (exact 0.048)
	// score - noise - bias - variance = 0e+00
	// gain of averaging the 200 members: 0.042
}

// The ensemble gain of Example 3.4 of Gruber & Buettner (ICML 2024): variance 0.0052 and
// covariance 0.0049 between consecutive epochs.
func ExampleEnsembleGain() {
	for _, n := range []int{2, 5, 10} {
		fmt.Printf("n=%2d: %.5f\n", n, kscore.EnsembleGain(0.0052, 0.0049, n))
	}
	// Output:
	// n= 2: 0.00015
	// n= 5: 0.00024
	// n=10: 0.00027
}

// The linear kernel's unbiased MMD² is ‖x̄ − ȳ‖² − tr S_x/m − tr S_y/n,
// the same for any common shift of both samples; at an offset of 1e8 it
// is computed around the offset, so the shift changes nothing but the
// last digits (evaluated directly, it came out 9,600 for 4.16).
func ExampleMMD2_offset() {
	x := mat.NewDense(4, 2, []float64{0, 0, 1, 0, 0, 1, 1, 1})
	y := mat.NewDense(4, 2, []float64{2, 2, 3, 2, 2, 3, 3, 3})
	shift := func(m *mat.Dense, by float64) *mat.Dense {
		var s mat.Dense
		s.Apply(func(_, _ int, v float64) float64 { return v + by }, m)
		return &s
	}
	for _, off := range []float64{0, 1e8} {
		v, _ := kscore.MMD2(kernel.Linear{}, shift(x, off), shift(y, off))
		fmt.Printf("offset %g: MMD² %.6f\n", off, v)
	}
	// Output:
	// offset 0: MMD² 7.666667
	// offset 1e+08: MMD² 7.666667
}
