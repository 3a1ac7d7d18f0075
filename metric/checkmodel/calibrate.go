package checkmodel

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// DefaultFolds is the number of cross-fitting folds Fit calibrates with.
const DefaultFolds = 5

// Calibration puts a check model's estimates on the scale of the realised
// MSE.
//
// The one-step objectives K* and K make h estimate an upper bound of the
// MSE, not the MSE itself: with Gaussian noise of variance σ² the network
// that minimises K* puts 2 (h - f)² near 1.55 σ² (an expectile of the
// squared error, not its mean), so uncalibrated estimates run about 50%
// above the realised MSE on real data (cadata: 0.77 against 0.50) and
// every chunk lies above thresholds drawn from the realised MSE. How far
// above depends on the network at hand (200 epochs do not converge:
// networks from different initialisations give ratios from 1.2 to 1.4 on
// the same data), so the factor is the final network's own in-sample
// ratio of realised MSE to raw estimate, corrected by the optimism that
// K-fold cross-fitting measures: each fold is held out once, a network
// with the same configuration is trained on the others, and the pooled
// ratio of raw estimate to realised MSE on held-out rows is set against
// the one on training rows. Estimates are multiplied by Factor, so
// thresholds (realised MSE of reference chunks) and estimates share one
// scale.
type Calibration struct {
	// Factor multiplies every raw estimate 2 (h(x) - f(x))². 0 (a model
	// file written before calibration existed) means 1.
	Factor float64 `json:"factor"`
	// Folds is the number of cross-fitting folds.
	Folds int `json:"folds"`
	// Optimism is the held-out ratio of raw estimate to realised MSE
	// over the training-row ratio, pooled over folds (1: no optimism).
	Optimism float64 `json:"optimism"`
	// HeldOutRealized and HeldOutEstimated are the realised MSE and the
	// raw (uncalibrated) estimate of the fold networks over all
	// held-out rows, in squared target units.
	HeldOutRealized  float64 `json:"held_out_realized_mse"`
	HeldOutEstimated float64 `json:"held_out_raw_estimated_mse"`
}

// FactorOrOne is the multiplier of raw estimates (1 for an uncalibrated
// model).
func (c Calibration) FactorOrOne() float64 { return c.factor() }

// factor is the multiplier of raw estimates (1 for an uncalibrated model).
func (c Calibration) factor() float64 {
	if c.Factor > 0 {
		return c.Factor
	}
	return 1
}

// CrossFit measures the optimism of cfg's check model on x, y and f (in
// the units given) with the given number of folds: rows are dealt to
// folds in a random order drawn from rng, and each fold's network is
// trained with cfg and a fresh generator drawn from rng. It needs at
// least two rows per fold. Factor is left for the caller, which knows the
// final network (Fit sets it).
func CrossFit(ctx context.Context, x *mat.Dense, y, f []float64, cfg Config, folds int, rng *rand.Rand) (Calibration, error) {
	c, _, err := crossFit(ctx, x, y, f, cfg, folds, rng)
	return c, err
}

// crossFit is CrossFit that also returns every row's raw held-out
// estimate 2 (h(x) - f(x))², h the network of the fold holding it out.
func crossFit(ctx context.Context, x *mat.Dense, y, f []float64, cfg Config, folds int, rng *rand.Rand) (Calibration, []float64, error) {
	if err := checkXYF(x, y, f); err != nil {
		return Calibration{}, nil, err
	}
	n, _ := x.Dims()
	if folds < 2 || n < 2*folds {
		return Calibration{}, nil, fmt.Errorf("checkmodel: %d rows cannot be cut into %d folds of at least 2", n, folds)
	}
	held := make([]float64, n)
	perm := rng.Perm(n)
	var c Calibration
	c.Folds = folds
	var trEst, trReal float64
	for k := 0; k < folds; k++ {
		var tr, te []int
		for i, r := range perm {
			if i%folds == k {
				te = append(te, r)
			} else {
				tr = append(tr, r)
			}
		}
		xt, yt, ft := subset(x, y, f, tr)
		xh, yh, fh := subset(x, y, f, te)
		h, _, err := fitNet(ctx, xt, yt, ft, cfg, rand.New(rand.NewPCG(rng.Uint64(), rng.Uint64())))
		if err != nil {
			return Calibration{}, nil, err
		}
		e, r := sums(h.Predict1(xt), yt, ft)
		for k, v := range h.Predict1(xh) {
			held[te[k]] = 2 * (v - fh[k]) * (v - fh[k])
		}
		trEst += e / float64(len(tr))
		trReal += r / float64(len(tr))
		e, r = sums(h.Predict1(xh), yh, fh)
		c.HeldOutEstimated += e / float64(n)
		c.HeldOutRealized += r / float64(n)
	}
	// Optimism: how much higher the raw-to-realised ratio is on held-out
	// rows than on training rows, pooled over folds.
	c.Optimism = 1
	if held, train := c.HeldOutEstimated/c.HeldOutRealized, trEst/trReal; held > 0 && train > 0 && !math.IsInf(held, 0) && !math.IsInf(train, 0) {
		c.Optimism = held / train
	}
	return c, held, nil
}

// sums returns Σ 2 (h - f)² and Σ (y - f)².
func sums(h, y, f []float64) (est, real float64) {
	for i := range h {
		d := h[i] - f[i]
		est += 2 * d * d
		r := y[i] - f[i]
		real += r * r
	}
	return est, real
}

// calibrate sets c.Factor for a network whose raw in-sample estimate is
// rawIn against the realised realIn: the production ratio is expected to
// be the in-sample one times the optimism.
func (c *Calibration) calibrate(rawIn, realIn float64) {
	c.Factor = 1
	if r := rawIn / realIn * c.Optimism; r > 0 && !math.IsInf(r, 0) {
		c.Factor = 1 / r
	}
}

// subset copies the given rows of x, y and f.
func subset(x *mat.Dense, y, f []float64, rows []int) (*mat.Dense, []float64, []float64) {
	_, d := x.Dims()
	xs := mat.NewDense(len(rows), d, nil)
	ys, fs := make([]float64, len(rows)), make([]float64, len(rows))
	for i, r := range rows {
		xs.SetRow(i, x.RawRowView(r))
		ys[i], fs[i] = y[r], f[r]
	}
	return xs, ys, fs
}
