package chart_test

import (
	"fmt"
	"log"
	"math"
	"os"
	"path/filepath"

	"github.com/genlens/genlens/internal/report/chart"
)

// This example draws the distributional correlation between three
// training epochs on the fixed range [-1, 1], so that charts from
// different runs share one colour scale.
func ExampleHeatmap() {
	dir, err := os.MkdirTemp("", "chart-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	corr := [][]float64{
		{1.00, 0.82, 0.31},
		{0.82, 1.00, 0.74},
		{0.31, 0.74, 1.00},
	}
	path := filepath.Join(dir, "epochs.png")
	err = chart.Heatmap(path, "Correlation between epochs", corr, []string{"10", "20", "30"}, -1, 1)
	if err != nil {
		log.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(fi.Name(), fi.Size() > 0)

	// Output:
	// epochs.png true
}

// This example draws a mean curve with a band of one standard deviation.
func ExampleLines() {
	dir, err := os.MkdirTemp("", "chart-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	epochs := []float64{1, 2, 3, 4, 5}
	mean := make([]float64, len(epochs))
	lower := make([]float64, len(epochs))
	upper := make([]float64, len(epochs))
	for i, e := range epochs {
		mean[i] = math.Log1p(e)
		lower[i], upper[i] = mean[i]-0.1, mean[i]+0.1
	}
	err = chart.Lines(filepath.Join(dir, "entropy.svg"), "Kernel entropy", "epoch", "entropy (nats)", []chart.Series{
		{Name: "mean ± sd", X: epochs, Y: mean, Lower: lower, Upper: upper},
	})
	fmt.Println(err)

	// Output:
	// <nil>
}
