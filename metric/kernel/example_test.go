package kernel_test

import (
	"fmt"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/metric/kernel"
)

// The CS kernel compares answers by their shared word bigrams (here one of
// 4 and 2: 1/sqrt(4·2)); an answer
// too short to have a bigram matches only an identical answer.
func ExampleCS() {
	k := kernel.CS{T: 2}
	ans := func(s string) []string { return strings.Fields(s) }
	fmt.Printf("%.3f\n", k.Eval(ans("the eiffel tower in paris"), ans("eiffel tower paris")))
	fmt.Printf("%.3f\n", k.Eval(ans("paris"), ans("paris")))
	fmt.Printf("%.3f\n", k.Eval(ans("paris"), ans("lyon")))
	// Output:
	// 0.354
	// 1.000
	// 0.000
}

// Build a kernel from the --gamma syntax: "median" looks at the data.
func ExampleNew() {
	x := mat.NewDense(4, 1, []float64{0, 1, 2, 4})
	bw, _ := kernel.ParseBandwidth("median")
	k, _ := kernel.New("rbf", bw, x)
	fmt.Println(k)
	// Output: rbf(gamma=0.4)
}

// Resolve a bandwidth rule on several sample sets at once, as the genlens
// commands do: the median rule sees up to MedianRows rows evenly spaced
// over all the sets.
func ExampleResolve() {
	real := mat.NewDense(3, 1, []float64{0, 1, 2})
	fake := mat.NewDense(2, 1, []float64{4, 6})
	k, _ := kernel.Resolve("laplacian", kernel.Bandwidth{Rule: kernel.Median}, []*mat.Dense{real, fake})
	fmt.Println(k)
	// Output: laplacian(gamma=0.5)
}
