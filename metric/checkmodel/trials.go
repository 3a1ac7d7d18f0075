package checkmodel

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/internal/nn"
)

// Noise selects the noise of a synthetic data set of the paper's Eq. 19.
type Noise string

// The paper's synthetic data sets (Section 4.1).
const (
	NoiseA Noise = "a" // ε ~ N(0, 1)
	NoiseB Noise = "b" // ε = |N(0, 1)|, half-normal
	NoiseC Noise = "c" // ε ~ Inv-Gamma(shape 2, scale 0.5): outliers
)

// Synthetic draws n samples of the paper's Eq. 19:
//
//	x ~ N(0, 1),  y = (3x+5) sin(3x+5) + 0.3 (1 + max(0, 3x+5)) ε,
//
// with ε from noise. The inverse-Gamma draw is 0.5/G with G ~ Gamma(2, 1),
// i.e. scipy.stats.invgamma(2, scale=0.5): mean 0.5, infinite variance.
func Synthetic(noise Noise, n int, rng *rand.Rand) (*mat.Dense, []float64, error) {
	switch noise {
	case NoiseA, NoiseB, NoiseC:
	default:
		return nil, nil, fmt.Errorf("checkmodel: unknown synthetic noise %q (want a, b or c)", noise)
	}
	if n < 1 {
		return nil, nil, fmt.Errorf("checkmodel: %d synthetic samples", n)
	}
	x := mat.NewDense(n, 1, nil)
	y := make([]float64, n)
	for i := range y {
		v := rng.NormFloat64()
		var e float64
		switch noise {
		case NoiseA:
			e = rng.NormFloat64()
		case NoiseB:
			e = math.Abs(rng.NormFloat64())
		case NoiseC:
			// Gamma(2, 1) is the sum of two unit exponentials.
			e = 0.5 / (rng.ExpFloat64() + rng.ExpFloat64())
		}
		t := 3*v + 5
		x.Set(i, 0, v)
		y[i] = t*math.Sin(t) + 0.3*(1+math.Max(0, t))*e
	}
	return x, y, nil
}

// Trial is one repetition of an MSE-estimation experiment: the model under
// test f has been trained on Train, and its MSE on Op is to be estimated
// from Train and Op.X.
type Trial struct {
	Train, Op Data
	// Empirical is the realised MSE of f on Op, mean (y - f)², the
	// quantity the estimates are compared with.
	Empirical float64
}

// NewTrial prepares a trial from raw training and operational samples, as
// the paper does: targets are standardised with the training mean and
// standard deviation (and inputs too when scaleX is set), the prediction
// model f (a network of cfg's shape trained on squared error with
// cfg.Train) is fitted to the training data, and f's predictions and its
// empirical operational MSE are recorded, all in standardised units.
// Training f stops with ctx.Err() once ctx is done.
func NewTrial(ctx context.Context, xTrain *mat.Dense, yTrain []float64, xOp *mat.Dense, yOp []float64, scaleX bool, cfg Config, rng *rand.Rand) (*Trial, error) {
	n, d := xTrain.Dims()
	m, d2 := xOp.Dims()
	if d != d2 || len(yTrain) != n || len(yOp) != m {
		return nil, fmt.Errorf("checkmodel: trial shapes: train %dx%d with %d targets, op %dx%d with %d targets", n, d, len(yTrain), m, d2, len(yOp))
	}
	mu, sd := standardize(yTrain)
	ys, yo := make([]float64, n), make([]float64, m)
	for i := range ys {
		ys[i] = (yTrain[i] - mu) / sd
	}
	for i := range yo {
		yo[i] = (yOp[i] - mu) / sd
	}
	xt, xo := xTrain, xOp
	if scaleX {
		xt, xo = mat.NewDense(n, d, nil), mat.NewDense(m, d, nil)
		col := make([]float64, n)
		for j := 0; j < d; j++ {
			mat.Col(col, j, xTrain)
			cm, cs := standardize(col)
			for i := 0; i < n; i++ {
				xt.Set(i, j, (xTrain.At(i, j)-cm)/cs)
			}
			for i := 0; i < m; i++ {
				xo.Set(i, j, (xOp.At(i, j)-cm)/cs)
			}
		}
	}
	f, err := nn.New(cfg.sizes(d), rng)
	if err != nil {
		return nil, err
	}
	if _, err := nn.Fit(ctx, f, xt, nn.MSE(ys), cfg.Train, rng); err != nil {
		return nil, fmt.Errorf("checkmodel: training the prediction model: %w", err)
	}
	tr := &Trial{
		Train: Data{X: xt, Y: ys, F: f.Predict1(xt)},
		Op:    Data{X: xo, Y: yo, F: f.Predict1(xo)},
	}
	for i, y := range yo {
		r := y - tr.Op.F[i]
		tr.Empirical += r * r
	}
	tr.Empirical /= float64(m)
	return tr, nil
}

// TrialSource makes the data of trial number t (0-based) from rng; it
// returns ctx.Err() once ctx is done.
type TrialSource func(ctx context.Context, t int, rng *rand.Rand) (*Trial, error)

// SyntheticTrials is the paper's Section 4.1 protocol: every trial draws
// nTrain training and nOp operational samples of Eq. 19 (the paper: 100
// and 10000) and trains f on the training samples. Inputs are not
// rescaled (x is already N(0, 1)).
func SyntheticTrials(noise Noise, nTrain, nOp int, cfg Config) TrialSource {
	return func(ctx context.Context, _ int, rng *rand.Rand) (*Trial, error) {
		xt, yt, err := Synthetic(noise, nTrain, rng)
		if err != nil {
			return nil, err
		}
		xo, yo, err := Synthetic(noise, nOp, rng)
		if err != nil {
			return nil, err
		}
		return NewTrial(ctx, xt, yt, xo, yo, false, cfg, rng)
	}
}

// WindowTrials is the paper's Section 4.2 protocol for a data set of
// inputs x and targets y (the LIBSVM benchmarks): every trial takes
// nTrain + nOp contiguous rows from a start drawn uniformly at random, the
// first nTrain for training and the next nOp as operational data (the
// paper: 500 and 500), and trains f on the training rows. Contiguous
// windows of ordered files give a mild covariate shift between the two
// halves, which is the point of the protocol.
//
// Inputs are standardised with the training window's statistics. The paper
// scales only the targets, but its data sets other than cadata are
// already scaled to [-1, 1] by LIBSVM; cadata's raw inputs (populations in
// the thousands) would otherwise dominate the first layer.
func WindowTrials(x *mat.Dense, y []float64, nTrain, nOp int, cfg Config) (TrialSource, error) {
	n, _ := x.Dims()
	if len(y) != n {
		return nil, fmt.Errorf("checkmodel: %d rows and %d targets", n, len(y))
	}
	if nTrain < 2 || nOp < 1 || n < nTrain+nOp {
		return nil, fmt.Errorf("checkmodel: the protocol needs %d + %d contiguous rows, the data has %d", nTrain, nOp, n)
	}
	return func(ctx context.Context, _ int, rng *rand.Rand) (*Trial, error) {
		start := rng.IntN(n - nTrain - nOp + 1)
		xt := x.Slice(start, start+nTrain, 0, x.RawMatrix().Cols).(*mat.Dense)
		xo := x.Slice(start+nTrain, start+nTrain+nOp, 0, x.RawMatrix().Cols).(*mat.Dense)
		return NewTrial(ctx, mat.DenseCopyOf(xt), y[start:start+nTrain], mat.DenseCopyOf(xo), y[start+nTrain:start+nTrain+nOp], true, cfg, rng)
	}, nil
}
