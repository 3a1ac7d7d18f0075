package frechet_test

import (
	"fmt"
	"log"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/metric/frechet"
)

func ExampleDistance() {
	// N((0,0), diag(1,4)) and N((3,0), diag(4,1)): the closed form for
	// diagonal covariances is ||Δμ||² + Σ (√aᵢ - √bᵢ)² = 9 + 1 + 1.
	a := frechet.Stats{Mu: []float64{0, 0}, Sigma: mat.NewSymDense(2, []float64{1, 0, 0, 4})}
	b := frechet.Stats{Mu: []float64{3, 0}, Sigma: mat.NewSymDense(2, []float64{4, 0, 0, 1})}
	fd, err := frechet.Distance(a, b)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("FD = %.6f\n", fd)
	// Output: FD = 11.000000
}

func ExampleAccumulator() {
	// Stream feature rows in batches of any size (or one at a time) and
	// get pytorch-fid's statistics (covariance divided by n-1).
	acc := frechet.NewAccumulator(2)
	acc.AddRows(mat.NewDense(2, 2, []float64{1, 2, 3, 4}))
	acc.AddFloat32([]float32{5, 0})
	s := acc.Stats(1)
	fmt.Println("n:", s.N)
	fmt.Println("mean:", s.Mu)
	fmt.Printf("cov:\n%v\n", mat.Formatted(s.Sigma))
	// Output:
	// n: 3
	// mean: [3 2]
	// cov:
	// ⎡ 4  -2⎤
	// ⎣-2   4⎦
}

func ExampleReference() {
	// A fixed reference (the real data's statistics) is factorised once;
	// each small batch of generated rows is then scored without any
	// O(d³) work, as online model selection needs.
	ref, err := frechet.NewReference(frechet.Stats{
		Mu:    []float64{0, 0, 0},
		Sigma: mat.NewSymDense(3, []float64{1, 0, 0, 0, 1, 0, 0, 0, 1}),
	})
	if err != nil {
		log.Fatal(err)
	}
	batch := mat.NewDense(2, 3, []float64{
		1, 0, 0,
		-1, 0, 0,
	})
	// ddof 0: the 1/n covariance of Hu, Leung & Farnia (arXiv 2024), here diag(1, 0, 0).
	fd, err := ref.DistanceToSamples(batch, 0)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("FD = %.6f\n", fd)
	// Output: FD = 2.000000
}

func ExampleInceptionScore() {
	// Four confident predictions over four distinct classes: IS = 4.
	probs := mat.NewDense(4, 4, []float64{
		1, 0, 0, 0,
		0, 1, 0, 0,
		0, 0, 1, 0,
		0, 0, 0, 1,
	})
	mean, std, err := frechet.InceptionScore(probs, 1)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("IS = %.3f ± %.3f\n", mean, std)
	// Output: IS = 4.000 ± 0.000
}

func ExampleTraceSqrtProduct() {
	// Tr (S₁S₂)^{1/2} for commuting S₁ = diag(1, 4), S₂ = diag(9, 1):
	// √9 + √4 = 5.
	s1 := mat.NewSymDense(2, []float64{1, 0, 0, 4})
	s2 := mat.NewSymDense(2, []float64{9, 0, 0, 1})
	fmt.Printf("%.6f\n", frechet.TraceSqrtProduct(s1, s2))
	// Output: 5.000000
}
