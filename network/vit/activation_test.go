package vit

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/genlens/genlens/internal/tensor/linalg"
)

func TestActivations(t *testing.T) {
	exactGELU := func(x float64) float64 { return 0.5 * x * (1 + math.Erf(x/math.Sqrt2)) }
	quick := func(x float64) float64 { return x / (1 + math.Exp(-1.702*x)) }
	silu := func(x float64) float64 { return x / (1 + math.Exp(-x)) }
	for _, tc := range []struct {
		name  string
		f     func([]float32)
		exact func(float64) float64
		tol   float64 // |error| <= tol·max(|x|, 1e-3) + float32 rounding
	}{
		// Abramowitz and Stegun 7.1.26 is within 1.5e-7 of erf, and
		// within 5e-7 evaluated in float32: GELU = x/2·(1 + erf).
		{"gelu", gelu, exactGELU, 2.5e-7},
		{"quickGELU", quickGELU, quick, 2.5e-7},
		{"silu", func(a []float32) {
			one := make([]float32, len(a))
			for i := range one {
				one[i] = 1
			}
			swiglu(a, one)
		}, silu, 2.5e-7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var xs []float32
			for x := -12.0; x <= 12; x += 0.0007 {
				xs = append(xs, float32(x))
			}
			got := append([]float32(nil), xs...)
			tc.f(got)
			for i, x := range xs {
				want := tc.exact(float64(x))
				if d := math.Abs(float64(got[i]) - want); d > tc.tol*math.Max(math.Abs(float64(x)), 1e-3)+1.2e-7*math.Abs(want) {
					t.Fatalf("%s(%v) = %v, want %v (error %.3g)", tc.name, x, got[i], want, d)
				}
			}
		})
	}
	// In the negative tail 1 + erf is not formed by cancellation: at
	// x = −5 (GELU 1.4e-6) the float32 sum alone would be off by 4%.
	x := []float32{-5}
	gelu(x)
	if want := exactGELU(-5); math.Abs(float64(x[0])-want) > 0.005*math.Abs(want) {
		t.Errorf("gelu(-5) = %v, want %v", x[0], want)
	}
}

// TestForwardGrouping checks that an image's output does not depend on
// the batch it comes in nor on the number of workers: alone, in groups,
// with a group's products split over goroutines.
func TestForwardGrouping(t *testing.T) {
	// The pure-Go build's products split by blocks of the output and give
	// the same bits whatever the workers; OpenBLAS (-tags openblas) splits
	// its own way, and there the outputs agree to float32 rounding only.
	differ := func(a, b float32) bool { return a != b }
	if !linalg.SgemmKernel() {
		differ = func(a, b float32) bool {
			return math.Abs(float64(a-b)) > 1e-5*math.Max(1, math.Abs(float64(b)))
		}
	}
	for _, cfg := range []Config{smallDINO(56, false), smallDINO(56, true), smallCLIP(true)} {
		t.Run(cfg.Name, func(t *testing.T) {
			m, err := NewModel("random", cfg, randomWeights(cfg))
			if err != nil {
				t.Fatal(err)
			}
			r := rand.New(rand.NewPCG(5, 6))
			batch := make([][]float32, 7)
			for i := range batch {
				batch[i] = make([]float32, 3*cfg.Input*cfg.Input)
				for j := range batch[i] {
					batch[i][j] = float32(r.NormFloat64())
				}
			}
			ctx := context.Background()
			want, err := m.Forward(ctx, batch, 1)
			if err != nil {
				t.Fatal(err)
			}
			for _, workers := range []int{2, 3, 8} {
				got, err := m.Forward(ctx, batch, workers)
				if err != nil {
					t.Fatal(err)
				}
				for i := range batch {
					// One image with several workers splits its products.
					one, err := m.Forward(ctx, batch[i:i+1], workers)
					if err != nil {
						t.Fatal(err)
					}
					for j := range want[i] {
						if differ(got[i][j], want[i][j]) || differ(one[0][j], want[i][j]) {
							t.Fatalf("workers %d, image %d, value %d: %v in the batch, %v alone, %v with one worker", workers, i, j, got[i][j], one[0][j], want[i][j])
						}
					}
				}
			}
		})
	}
}
