package diversity_test

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/metric/diversity"
)

// The second example of the Vendi-Score README: two near-duplicates and
// one distinct sample count as about 2.16 distinct samples.
func ExampleVendiK() {
	k := mat.NewSymDense(3, []float64{
		1.0, 0.9, 0.0,
		0.9, 1.0, 0.0,
		0.0, 0.0, 1.0,
	})
	v, err := diversity.VendiK(k)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%.4f\n", v)
	// Output: 2.1573
}

// Feature rows with the linear kernel on normalised rows: four rows in two
// directions have a Vendi score of 2, whatever their lengths.
func ExampleVendi() {
	x := mat.NewDense(4, 2, []float64{
		1, 0,
		3, 0,
		0, 2,
		0, 5,
	})
	v, err := diversity.Vendi(x)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%.4f\n", v)
	// Output: 2.0000
}
