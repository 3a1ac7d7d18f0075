package checkmodel

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestResidualAndRegularizerByHand(t *testing.T) {
	// y = 3, f = 1, h = 2: (3-1)² - 2 (2-1)² = 4 - 2 = 2.
	if got := Residual(3, 1, 2); got != 2 {
		t.Errorf("Residual(3, 1, 2) = %v, want 2", got)
	}
	// e = 0 at h = f ± |y - f|/√2.
	if got := Residual(3, 1, 1+2/math.Sqrt2); math.Abs(got) > 1e-15 {
		t.Errorf("Residual at the upper root = %v", got)
	}
	y := []float64{3, 0, 5}
	f := []float64{1, 0, 5}
	h := []float64{2, 7, -1}
	// Row 1: (1-3)² max(0, 2-(1-0.5))² = 4 · 2.25 = 9; row 2: f = y: 0;
	// row 3: f = y: 0. R = 9/3 = 3.
	if got := Regularizer(y, f, h, 0.5); got != 3 {
		t.Errorf("Regularizer = %v, want 3", got)
	}
	// Below f - eps there is no penalty.
	if got := Regularizer([]float64{3}, []float64{1}, []float64{0.4}, 0.5); got != 0 {
		t.Errorf("Regularizer below f - eps = %v, want 0", got)
	}
}

func TestBoundsTheorem2(t *testing.T) {
	// E² <= K* <= K <= 2 K* (Eq. 7) for residuals of every sign mix.
	r := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		name string
		draw func() (y, f, h float64)
	}{
		{"gaussian", func() (float64, float64, float64) { return r.NormFloat64(), r.NormFloat64(), r.NormFloat64() }},
		{"h = f: e >= 0 only", func() (float64, float64, float64) { v := r.NormFloat64(); return r.NormFloat64(), v, v }},
		{"f = y: e <= 0 only", func() (float64, float64, float64) { v := r.NormFloat64(); return v, v, r.NormFloat64() }},
		{"heavy tails", func() (float64, float64, float64) {
			return r.NormFloat64() / (r.Float64() + 0.01), r.NormFloat64(), 3 * r.NormFloat64()
		}},
		{"good check model", func() (float64, float64, float64) {
			y, f := r.NormFloat64(), r.NormFloat64()
			return y, f, f + (y-f)/math.Sqrt2 + 0.01*r.NormFloat64()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for rep := 0; rep < 50; rep++ {
				n := 1 + r.IntN(200)
				y, f, h := make([]float64, n), make([]float64, n), make([]float64, n)
				for i := range y {
					y[i], f[i], h[i] = tc.draw()
				}
				b := Evaluate(y, f, h)
				tol := 1e-12 * b.K
				if !(b.MeanResidual*b.MeanResidual <= b.KStar+tol && b.KStar <= b.K+tol && b.K <= 2*b.KStar+tol) {
					t.Fatalf("n=%d: E²=%g K*=%g K=%g violate E² <= K* <= K <= 2K*", n, b.MeanResidual*b.MeanResidual, b.KStar, b.K)
				}
				// Cross-check the sums directly.
				var sum, sq float64
				for i := range y {
					e := Residual(y[i], f[i], h[i])
					sum += e
					sq += e * e
				}
				if math.Abs(sum/float64(n)-b.MeanResidual) > 1e-12*math.Max(1, math.Abs(sum)) || math.Abs(sq/float64(n)-b.K) > 1e-12*math.Max(1, sq) {
					t.Fatalf("Evaluate disagrees with the direct sums")
				}
			}
		})
	}
}

func TestKStarSelectsTheHeavierSide(t *testing.T) {
	// e = (4, 1, -3): K+ = (16+1)/3, K- = 9/3; K* = 17/3 (the positive
	// side), K = 26/3.
	y := []float64{2, 1, 0}
	f := []float64{0, 0, 0}
	h := []float64{0, 0, math.Sqrt(1.5)} // e = 4, 1, 0 - 2·1.5 = -3
	b := Evaluate(y, f, h)
	if math.Abs(b.KPlus-17.0/3) > 1e-12 || math.Abs(b.KMinus-3) > 1e-12 ||
		math.Abs(b.KStar-17.0/3) > 1e-12 || math.Abs(b.K-26.0/3) > 1e-12 {
		t.Errorf("%+v", b)
	}
}

func TestLossValuesAndGradients(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const n = 40
	y, f, h := make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range y {
		y[i], f[i], h[i] = r.NormFloat64(), r.NormFloat64(), r.NormFloat64()
	}
	rows := make([]int, n)
	for i := range rows {
		rows[i] = i
	}
	const lambda, eps = 100, 1e-3
	for _, obj := range []Objective{K, KStar, L} {
		loss, err := Loss(obj, y, f, lambda, eps)
		if err != nil {
			t.Fatal(err)
		}
		grad := make([]float64, n)
		v := loss(rows, h, grad)
		b := Evaluate(y, f, h)
		want := map[Objective]float64{K: b.K, KStar: b.KStar, L: b.KStar + lambda*Regularizer(y, f, h, eps)}[obj]
		if math.Abs(v-want) > 1e-12*math.Max(1, want) {
			t.Errorf("%s: loss %v, want %v", obj, v, want)
		}
		// Central differences; the steps are far smaller than the
		// distance to any switch of s or of the max(0, .) kink.
		const step = 1e-6
		scratch := make([]float64, n)
		for i := range h {
			orig := h[i]
			h[i] = orig + step
			up := loss(rows, h, scratch)
			h[i] = orig - step
			down := loss(rows, h, scratch)
			h[i] = orig
			num := (up - down) / (2 * step)
			if math.Abs(num-grad[i]) > 1e-6*math.Max(1, math.Abs(num)) {
				t.Errorf("%s: d/dh[%d] = %v, finite difference %v", obj, i, grad[i], num)
			}
		}
	}
	// The sign selector uses the batch: on a sub-batch it can differ
	// from the full sample's.
	loss, _ := Loss(KStar, y, f, 0, 0)
	sub := []int{3, 7}
	g := make([]float64, 2)
	got := loss(sub, []float64{h[3], h[7]}, g)
	b := Evaluate([]float64{y[3], y[7]}, []float64{f[3], f[7]}, []float64{h[3], h[7]})
	if math.Abs(got-b.KStar) > 1e-12 {
		t.Errorf("sub-batch K* %v, want %v", got, b.KStar)
	}
	if _, err := Loss("q", y, f, 0, 0); err == nil {
		t.Error("unknown objective accepted")
	}
	if _, err := Loss(L, y, f, math.NaN(), 0); err == nil {
		t.Error("NaN lambda accepted")
	}
}

func TestParseObjective(t *testing.T) {
	for in, want := range map[string]Objective{"kstar": KStar, "K*": KStar, " k ": K, "L": L} {
		if got, err := ParseObjective(in); err != nil || got != want {
			t.Errorf("ParseObjective(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseObjective("kk"); err == nil {
		t.Error("ParseObjective accepted kk")
	}
}
