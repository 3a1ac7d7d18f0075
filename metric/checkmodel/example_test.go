package checkmodel_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/metric/checkmodel"
)

// Train a check model on labelled reference data with the deployed
// model's predictions, then estimate that model's MSE on new inputs
// without their labels.
func ExampleFit() {
	r := rand.New(rand.NewPCG(7, 7))
	draw := func(n int) (*mat.Dense, []float64, []float64) {
		x := mat.NewDense(n, 1, nil)
		y, f := make([]float64, n), make([]float64, n)
		for i := range y {
			v := 4*r.Float64() - 2
			x.Set(i, 0, v)
			f[i] = math.Sin(v)                                           // the deployed model
			y[i] = math.Sin(v) + 0.3*v + 0.2*math.Abs(v)*r.NormFloat64() // the truth it misses
		}
		return x, y, f
	}
	xr, yr, fr := draw(500)
	m, _ := checkmodel.Fit(context.Background(), xr, yr, fr, checkmodel.DefaultConfig(), 1)

	xo, yo, fo := draw(5000) // yo is what the labels would say later
	est, _ := m.Estimate(xo, fo)
	var realized float64
	for i := range yo {
		realized += (yo[i] - fo[i]) * (yo[i] - fo[i]) / float64(len(yo))
	}
	fmt.Printf("estimate within 25%% of the realised MSE: %v\n", math.Abs(est-realized) < 0.25*realized)
	// Output: estimate within 25% of the realised MSE: true
}

// The bounds of Theorem 2 on one sample: E² <= K* <= K <= 2 K*.
func ExampleEvaluate() {
	y := []float64{2, 1, 0}
	f := []float64{0, 0, 0}
	h := []float64{0, 0, math.Sqrt(1.5)} // residuals e = 4, 1, -3
	b := checkmodel.Evaluate(y, f, h)
	fmt.Printf("E² %.3f  K* %.3f  K %.3f  2K* %.3f\n", b.MeanResidual*b.MeanResidual, b.KStar, b.K, 2*b.KStar)
	// Output: E² 0.444  K* 5.667  K 8.667  2K* 11.333
}
