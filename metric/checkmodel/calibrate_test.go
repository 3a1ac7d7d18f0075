package checkmodel

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// noisyData draws n rows x ~ U[-2, 2]² with a deployed model f that is
// the true mean sin(x1) + x2/2 and targets y = f + N(0, σ²): the MSE of f
// is σ² everywhere, which K* overestimates (an expectile of (y - f)², about
// 1.55 σ² for Gaussian noise).
func noisyData(n int, sigma float64, seed uint64) (*mat.Dense, []float64, []float64) {
	r := rand.New(rand.NewPCG(seed, 3))
	x := mat.NewDense(n, 2, nil)
	y, f := make([]float64, n), make([]float64, n)
	for i := 0; i < n; i++ {
		a, b := 4*r.Float64()-2, 4*r.Float64()-2
		x.Set(i, 0, a)
		x.Set(i, 1, b)
		f[i] = math.Sin(a) + b/2
		y[i] = f[i] + sigma*r.NormFloat64()
	}
	return x, y, f
}

// Calibration brings the production estimate from the K* expectile back
// to the realised MSE: uncalibrated it is more than 25% high, calibrated
// within 15% on fresh data.
func TestCalibrationGaussianNoise(t *testing.T) {
	if testing.Short() {
		t.Skip("trains six networks")
	}
	const sigma = 0.5
	x, y, f := noisyData(1500, sigma, 1)
	xo, yo, fo := noisyData(4000, sigma, 2)
	var real float64
	for i := range yo {
		real += (yo[i] - fo[i]) * (yo[i] - fo[i])
	}
	real /= float64(len(yo))

	raw := DefaultConfig()
	raw.Folds = 0
	m0, err := Fit(context.Background(), x, y, f, raw, 1)
	if err != nil {
		t.Fatal(err)
	}
	if m0.Calibration.Factor != 0 || m0.Calibration.FactorOrOne() != 1 {
		t.Errorf("uncalibrated model has calibration %+v", m0.Calibration)
	}
	e0, _ := m0.Estimate(xo, fo)
	m, err := Fit(context.Background(), x, y, f, DefaultConfig(), 1)
	if err != nil {
		t.Fatal(err)
	}
	e, _ := m.Estimate(xo, fo)
	t.Logf("realised %.4f; raw estimate %.4f (x%.2f); calibrated %.4f (factor %.3f, optimism %.3f)",
		real, e0, e0/real, e, m.Calibration.Factor, m.Calibration.Optimism)
	if math.Abs(e0/real-1) < 0.25 {
		t.Errorf("raw K* estimate %.4f is within 25%% of the realised %.4f: the test no longer shows the expectile bias", e0, real)
	}
	if math.Abs(e/real-1) > 0.15 {
		t.Errorf("calibrated estimate %.4f, realised %.4f: off by more than 15%%", e, real)
	}
	// The factor is the in-sample ratio over the optimism, and the
	// in-sample figures are consistent with it.
	c := m.Calibration
	ref := m.Reference
	if got := ref.RealizedMSE / ref.RawEstimatedMSE / c.Optimism; math.Abs(got-c.Factor) > 1e-9*got {
		t.Errorf("factor %v, in-sample ratio over optimism %v", c.Factor, got)
	}
	if got := m.Reference.RawEstimatedMSE * c.Factor; math.Abs(got-m.Reference.EstimatedMSE) > 1e-9*got {
		t.Errorf("in-sample raw %v x factor %v != calibrated %v", m.Reference.RawEstimatedMSE, c.Factor, m.Reference.EstimatedMSE)
	}
}

// RowEstimates are the raw 2 (h - f)² times the factor, exactly.
func TestRowEstimatesCalibrated(t *testing.T) {
	x, y, f := noisyData(50, 0.3, 3)
	cfg := DefaultConfig()
	cfg.Folds, cfg.Train.Epochs = 0, 5
	m, err := Fit(context.Background(), x, y, f, cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := m.RowEstimates(x, f)
	h, _ := m.Check(x)
	m.Calibration = Calibration{Factor: 0.5, Folds: 5}
	cal, _ := m.RowEstimates(x, f)
	for i := range raw {
		d := h[i] - f[i]
		if raw[i] != 2*d*d || cal[i] != 0.5*raw[i] {
			t.Fatalf("row %d: raw %v (want %v), calibrated %v", i, raw[i], 2*d*d, cal[i])
		}
	}
	m.Calibration.Factor = math.Inf(1)
	if err := m.Validate(); err == nil {
		t.Error("an infinite calibration factor validates")
	}
}

// CrossFit refuses folds it cannot fill.
func TestCrossFitFolds(t *testing.T) {
	x, y, f := noisyData(7, 0.3, 4)
	for _, k := range []int{0, 1, 4} {
		if _, err := CrossFit(context.Background(), x, y, f, DefaultConfig(), k, rand.New(rand.NewPCG(1, 1))); err == nil {
			t.Errorf("%d folds of 7 rows: no error", k)
		}
	}
}
