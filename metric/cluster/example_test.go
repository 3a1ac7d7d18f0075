package cluster_test

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/metric/cluster"
)

func ExampleAgglomerate() {
	// Five points on a line: two tight groups and a loner.
	x := []float64{0, 0.5, 1, 10, 10.5}
	d := mat.NewSymDense(len(x), nil)
	for i := range x {
		for j := i + 1; j < len(x); j++ {
			d.SetSym(i, j, math.Abs(x[i]-x[j]))
		}
	}
	tree, _ := cluster.Agglomerate(d, cluster.Average)
	for _, m := range tree.Merges {
		fmt.Printf("%d + %d at %.2f (%d items)\n", m.A, m.B, m.Height, m.Size)
	}
	labels, _ := tree.CutK(2)
	fmt.Println(labels)
	// Output:
	// 0 + 1 at 0.50 (2 items)
	// 3 + 4 at 0.50 (2 items)
	// 2 + 5 at 0.75 (3 items)
	// 6 + 7 at 9.75 (5 items)
	// [0 0 0 1 1]
}
