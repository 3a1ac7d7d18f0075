package frechet

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestCMMDHandComputed checks cases worked out by hand with
// k(a, b) = exp(−‖a − b‖²/200), diagonals included, × 1000.
func TestCMMDHandComputed(t *testing.T) {
	e := math.Exp(-25.0 / 200) // two points 5 apart
	for _, c := range []struct {
		name string
		x, y *mat.Dense
		want float64
	}{
		// One point each, 3 apart: 1000 (1 + 1 − 2 e^{−9/200}).
		{"single points", mat.NewDense(1, 1, []float64{0}), mat.NewDense(1, 1, []float64{3}), 1000 * (2 - 2*math.Exp(-9.0/200))},
		// Equal sets: 0.
		{"equal sets", mat.NewDense(2, 1, []float64{0, 10}), mat.NewDense(2, 1, []float64{10, 0}), 0},
		// x = {(0,0), (3,4)}, y = {(0,0)}: mean k_xx = (2 + 2e)/4 (diagonal
		// pairs count), k_yy = 1, mean k_xy = (1 + e)/2; the biased
		// statistic is 1000 ((1 + e)/2 + 1 − (1 + e)) = 500 (1 − e).
		{"v-statistic", mat.NewDense(2, 2, []float64{0, 0, 3, 4}), mat.NewDense(1, 2, []float64{0, 0}), 500 * (1 - e)},
	} {
		got, err := CMMD(context.Background(), c.x, c.y)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got-c.want) > 1e-12*math.Max(1, math.Abs(c.want)) {
			t.Errorf("%s: %.15g, want %.15g", c.name, got, c.want)
		}
	}
}

// TestCMMDBruteForce compares with the three kernel means summed pair by
// pair from direct distances, on sets larger than one block and with
// different sizes, including CLIP-like unit rows.
func TestCMMDBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	gen := func(n, d int, shift float64, unit bool) *mat.Dense {
		x := mat.NewDense(n, d, nil)
		for i := 0; i < n; i++ {
			row := x.RawRowView(i)
			var s float64
			for j := range row {
				row[j] = rng.NormFloat64() + shift
				s += row[j] * row[j]
			}
			if unit {
				for j := range row {
					row[j] /= math.Sqrt(s)
				}
			}
		}
		return x
	}
	mean := func(a, b *mat.Dense) float64 {
		na, _ := a.Dims()
		nb, _ := b.Dims()
		var s float64
		for i := 0; i < na; i++ {
			for j := 0; j < nb; j++ {
				var d2 float64
				for k, v := range a.RawRowView(i) {
					t := v - b.At(j, k)
					d2 += t * t
				}
				s += math.Exp(-d2 / 200)
			}
		}
		return s / float64(na*nb)
	}
	for _, c := range []struct {
		name string
		x, y *mat.Dense
	}{
		{"gauss", gen(700, 6, 0, false), gen(530, 6, 0.4, false)},
		{"unit rows", gen(300, 32, 0, true), gen(200, 32, 0.1, true)},
	} {
		got, err := CMMD(context.Background(), c.x, c.y)
		if err != nil {
			t.Fatal(err)
		}
		want := 1000 * (mean(c.x, c.x) + mean(c.y, c.y) - 2*mean(c.x, c.y))
		if math.Abs(got-want) > 1e-9*math.Abs(want) {
			t.Errorf("%s: %.15g, brute force %.15g", c.name, got, want)
		}
		t.Logf("%s: %.10g", c.name, got)
	}
	if _, err := CMMD(context.Background(), mat.NewDense(2, 2, nil), mat.NewDense(2, 3, nil)); err == nil {
		t.Error("dimension mismatch accepted")
	}
}
