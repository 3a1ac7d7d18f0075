package online_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/metric/online"
)

// gaussian returns n rows of N(0, s·I_d).
func gaussian(rng *rand.Rand, n, d int, s float64) *mat.Dense {
	x := mat.NewDense(n, d, nil)
	for i := range x.RawMatrix().Data {
		x.RawMatrix().Data[i] = math.Sqrt(s) * rng.NormFloat64()
	}
	return x
}

// Protocol 1 with FID-UCB: three generators whose features are Gaussians
// with 0.1, 0.4 and 1 times the reference covariance, two collapsed ones
// and one that matches the reference, as in the paper's truncation
// experiment. Each step asks the algorithm which generator to sample,
// draws a batch of 5 from it and hands the batch back.
func Example() {
	rng := rand.New(rand.NewPCG(1, 2))
	const d = 4
	ref, err := online.FIDReferenceFromRows(gaussian(rng, 5000, d, 1))
	if err != nil {
		panic(err)
	}
	scales := []float64{0.1, 0.4, 1}
	alg, err := online.NewFIDSelector(ref, len(scales), online.FIDUCB, online.DefaultFIDParams())
	if err != nil {
		panic(err)
	}
	picks := make([]int, len(scales))
	var first []int
	for t := 0; t < 300; t++ {
		g := alg.Pick()
		if t < len(scales) {
			first = append(first, g)
		}
		picks[g]++
		if err := alg.Update(g, gaussian(rng, 5, d, scales[g])); err != nil {
			panic(err)
		}
	}
	fmt.Println("first picks:", first)
	fmt.Println("most picked:", argmax(picks))
	// Output:
	// first picks: [0 1 2]
	// most picked: 2
}

func argmax(x []int) int {
	best := 0
	for i, v := range x {
		if v > x[best] {
			best = i
		}
	}
	return best
}

// A simulation over pools of pre-computed features: the true score of a
// generator is the FID of its whole pool, and each algorithm's regret is
// measured against the best one.
func ExampleSimulation_RunFID() {
	rng := rand.New(rand.NewPCG(3, 4))
	const d = 4
	ref, err := online.FIDReferenceFromRows(gaussian(rng, 5000, d, 1))
	if err != nil {
		panic(err)
	}
	var pools []*mat.Dense
	for _, s := range []float64{0.2, 1, 3} {
		pools = append(pools, gaussian(rng, 1000, d, s))
	}
	sim := online.Simulation{Steps: 200, Batch: 5, Trials: 4, Seed: 1}
	res, err := sim.RunFID(context.Background(), ref, pools, []online.FIDRule{online.FIDUCB, online.FIDGreedy}, online.DefaultFIDParams())
	if err != nil {
		panic(err)
	}
	fmt.Println("best generator:", res.Best)
	for _, a := range res.Algorithms {
		fmt.Printf("%s: %d curve points, regret ≥ 0: %v\n", a.Name, len(a.Regret.Mean), a.FinalRegret.Mean >= 0)
	}
	// Output:
	// best generator: 1
	// fid-ucb: 200 curve points, regret ≥ 0: true
	// greedy: 200 curve points, regret ≥ 0: true
}
