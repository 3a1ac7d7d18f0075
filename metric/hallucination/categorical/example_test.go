package categorical_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/genlens/genlens/metric/hallucination/categorical"
)

// A binary classifier with one input: after seeing "yes" three times, the
// posterior hallucination rate at ε = 0.05 is the chance of answering
// "no" while "no" is in fact rarer than 5%, plus the reverse: by hand,
// 0.2 x (1 - 0.95⁴) + 0.8 x 0.05⁴ = 0.0371.
func ExamplePosterior_PHR() {
	m := categorical.Symmetric(1, 2, 1)
	post, _ := m.Posterior([]categorical.Example{{X: 0, Y: 0}, {X: 0, Y: 0}, {X: 0, Y: 0}})
	fmt.Printf("predictive %.2f\n", post.Predictive(0))
	fmt.Printf("PHR %.4f\n", post.PHR(0, 0.05, rand.New(rand.NewPCG(1, 1)), 0))
	total, aleatoric, epistemic := post.Entropy(0)
	fmt.Printf("entropy: total %.3f = aleatoric %.3f + epistemic %.3f\n", total, aleatoric, epistemic)
	// Output:
	// predictive [0.80 0.20]
	// PHR 0.0371
	// entropy: total 0.500 = aleatoric 0.417 + epistemic 0.084
}
