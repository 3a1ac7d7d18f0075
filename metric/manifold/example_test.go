package manifold_test

import (
	"context"
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/metric/manifold"
)

// Four real points on a line and two generated ones, with one nearest
// neighbour: every real ball has radius 1. The generated point 0.5 lies in
// the balls of reals 0 and 1; 10 lies in none.
func Example() {
	real := mat.NewDense(4, 1, []float64{0, 1, 2, 3})
	fake := mat.NewDense(2, 1, []float64{0.5, 10})
	p, err := manifold.Compute(context.Background(), real, fake, 1)
	if err != nil {
		panic(err)
	}
	fmt.Printf("precision %.2f recall %.2f density %.2f coverage %.2f\n", p.Precision, p.Recall, p.Density, p.Coverage)
	// Output:
	// precision 0.50 recall 1.00 density 1.00 coverage 0.50
}
