package bayeslin_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/genlens/genlens/metric/hallucination/bayeslin"
)

// The exact posterior hallucination rate falls towards ε as the context
// grows.
func ExamplePosterior_ExactPHR() {
	m := bayeslin.Model{Features: bayeslin.Poly{Degree: 3}, Noise: 0.1, PriorScale: 1}
	r := rand.New(rand.NewPCG(1, 2))
	f, _ := m.SampleFunction(r)
	for _, n := range []int{0, 4, 32, 100000} {
		post, _ := m.Posterior(f.Data(r, n))
		fmt.Printf("n=%-6d PHR %.3f\n", n, post.ExactPHR(0.5, 0.05))
	}
	// Output:
	// n=0      PHR 0.904
	// n=4      PHR 0.225
	// n=32     PHR 0.068
	// n=100000 PHR 0.050
}
