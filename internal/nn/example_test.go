package nn_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/internal/nn"
)

// Fit a network to a noiseless curve with the mean squared error.
func ExampleFit() {
	r := rand.New(rand.NewPCG(1, 2))
	x := mat.NewDense(100, 1, nil)
	y := make([]float64, 100)
	for i := range y {
		v := 4*r.Float64() - 2
		x.Set(i, 0, v)
		y[i] = math.Sin(2 * v)
	}
	net, _ := nn.New([]int{1, 64, 64, 1}, r) // the paper's 3-layer network
	cfg := nn.DefaultTrainConfig()           // 200 epochs, Adam lr 0.01, weight decay 1e-3
	cfg.Epochs = 500
	loss, _ := nn.Fit(context.Background(), net, x, nn.MSE(y), cfg, r)
	fmt.Printf("training MSE below 0.01: %v\n", loss < 0.01)
	// Output: training MSE below 0.01: true
}

// A custom objective: the mean absolute error, given as its value and
// gradient with respect to each output.
func ExamplePerSample() {
	y := []float64{1, 2, 3}
	mae := nn.PerSample(func(i int, out, grad []float64) float64 {
		d := out[0] - y[i]
		grad[0] = math.Copysign(1, d)
		return math.Abs(d)
	})
	grad := make([]float64, 3)
	v := mae([]int{0, 1, 2}, []float64{1.5, 2, 2}, grad)
	fmt.Printf("loss %.3f, gradient %.3f\n", v, grad)
	// Output: loss 0.500, gradient [0.333 0.333 -0.333]
}
