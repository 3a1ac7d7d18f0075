package checkmodel

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/internal/nn"
)

// Config sets up the training of a check model.
type Config struct {
	Objective Objective
	// Lambda and Eps are the weight and offset of the regulariser R
	// in L = K* + Lambda R (Eq. 17-18); unused by K and K*.
	Lambda, Eps float64
	// Hidden are the hidden-layer widths of h (and of every network of
	// the baselines).
	Hidden []int
	Train  nn.TrainConfig
	// Epochs says how the number of epochs is chosen: FixedEpochs
	// trains Train.Epochs, ValidationEpochs chooses up to Train.Epochs
	// on held-out rows (see ChooseEpochs). "" is FixedEpochs.
	Epochs EpochSelection
	// Folds is the number of cross-fitting folds Fit calibrates the
	// estimates with (see Calibration); 0 leaves them uncalibrated, as
	// the paper's Eq. 11.
	Folds int
}

// DefaultConfig is the paper's setting: objective K*, λ = 100, ε = 1e-3,
// a three-layer network with 64 hidden units and ReLU, 200 epochs of
// full-batch Adam with learning rate 0.01 and weight decay 1e-3; and, beyond
// the paper, DefaultFolds folds of calibration in Fit.
func DefaultConfig() Config {
	return Config{
		Objective: KStar,
		Lambda:    100,
		Eps:       1e-3,
		Hidden:    nn.DefaultHidden,
		Train:     nn.DefaultTrainConfig(),
		Epochs:    FixedEpochs,
		Folds:     DefaultFolds,
	}
}

func (c Config) sizes(inputs int) []int {
	s := append([]int{inputs}, c.Hidden...)
	return append(s, 1)
}

// checkXYF validates the shapes and values FitNet and the baselines get.
func checkXYF(x *mat.Dense, y, f []float64) error {
	if x == nil {
		return errors.New("checkmodel: no inputs")
	}
	n, _ := x.Dims()
	if len(y) != n || len(f) != n {
		return fmt.Errorf("checkmodel: %d input rows, %d targets, %d predictions", n, len(y), len(f))
	}
	if n < 2 {
		return fmt.Errorf("checkmodel: need at least 2 training rows, have %d", n)
	}
	for i := range y {
		if math.IsNaN(y[i]) || math.IsInf(y[i], 0) {
			return fmt.Errorf("checkmodel: target %d is %v", i, y[i])
		}
		if math.IsNaN(f[i]) || math.IsInf(f[i], 0) {
			return fmt.Errorf("checkmodel: prediction %d is %v", i, f[i])
		}
	}
	return nil
}

// FitNet trains a check network h on inputs x, targets y and predictions
// f of the model under test, all in the units given (no scaling), by
// minimising cfg.Objective. rng draws the initial weights (and the
// mini-batches, if any). Training stops with ctx.Err() once ctx is done
// (checked every epoch and mini-batch). With ValidationEpochs the count
// is first chosen on x, y and f by ChooseEpochs, which draws from rng
// (fewer than ten rows train the fixed Train.Epochs).
func FitNet(ctx context.Context, x *mat.Dense, y, f []float64, cfg Config, rng *rand.Rand) (*nn.MLP, error) {
	if err := checkXYF(x, y, f); err != nil {
		return nil, err
	}
	cfg, _, err := resolveEpochs(ctx, x, y, f, cfg, rng)
	if err != nil {
		return nil, err
	}
	h, _, err := fitNet(ctx, x, y, f, cfg, rng)
	return h, err
}

// fitNet is FitNet that also returns the objective after the last epoch;
// it trains cfg.Train.Epochs epochs whatever cfg.Epochs says.
func fitNet(ctx context.Context, x *mat.Dense, y, f []float64, cfg Config, rng *rand.Rand) (*nn.MLP, float64, error) {
	if err := checkXYF(x, y, f); err != nil {
		return nil, 0, err
	}
	loss, err := Loss(cfg.Objective, y, f, cfg.Lambda, cfg.Eps)
	if err != nil {
		return nil, 0, err
	}
	_, d := x.Dims()
	h, err := nn.New(cfg.sizes(d), rng)
	if err != nil {
		return nil, 0, err
	}
	final, err := nn.Fit(ctx, h, x, loss, cfg.Train, rng)
	if err != nil {
		return nil, 0, fmt.Errorf("checkmodel: training h: %w", err)
	}
	return h, final, nil
}

// EstimateMSE returns Eq. 11, mean 2 (h_i - f_i)², for check-model
// outputs h and predictions f at the same operational inputs.
func EstimateMSE(h, f []float64) float64 {
	var s float64
	for i := range h {
		d := h[i] - f[i]
		s += 2 * d * d
	}
	return s / float64(len(h))
}

// standardize returns the mean and the population standard deviation
// (ddof 0, as scikit-learn's StandardScaler) of v; a constant v gets scale
// 1 so that it maps to 0 instead of dividing by zero.
func standardize(v []float64) (mean, scale float64) {
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	var ss float64
	for _, x := range v {
		ss += (x - mean) * (x - mean)
	}
	scale = math.Sqrt(ss / float64(len(v)))
	if !(scale > 0) {
		scale = 1
	}
	return mean, scale
}
