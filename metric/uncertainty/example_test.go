package uncertainty_test

import (
	"fmt"

	"github.com/genlens/genlens/internal/text/tokenize"
	"github.com/genlens/genlens/metric/uncertainty"
)

// Three answers name Paris, one in more words, and one names Lyon: EigV
// counts a little over two clusters of meaning in their RougeL-F
// similarity matrix.
func ExampleEigV() {
	answers := []string{"Paris", "paris", "It is Paris", "Lyon"}
	toks := make([][]string, len(answers))
	for i, a := range answers {
		toks[i] = tokenize.Words(a)
	}
	w := uncertainty.RougeSimilarity(toks)
	fmt.Printf("W[0][2] = %.2f\n", w.At(0, 2))
	fmt.Printf("eigv %.3f, degree %.3f, kle %.3f\n",
		uncertainty.EigV(w), uncertainty.Degree(w), uncertainty.KLE(w, uncertainty.DefaultKLETime))
	// Output:
	// W[0][2] = 0.50
	// eigv 2.300, degree 0.500, kle 1.341
}
