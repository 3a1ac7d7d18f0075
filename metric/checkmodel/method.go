package checkmodel

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/internal/nn"
)

// Data is a set of inputs with the predictions of the model under test
// and, for labelled data, the targets.
type Data struct {
	X *mat.Dense
	// Y holds the targets; nil for unlabelled operational data.
	Y []float64
	// F holds the predictions f(x) of the model under test.
	F []float64
}

// A Method estimates the MSE of the model under test on operational
// inputs, from labelled training data (with f's predictions) alone.
type Method interface {
	// Name is the method's short name, as in MethodNames.
	Name() string
	// Estimate trains on train and returns the estimated MSE of f on
	// op.X (op.Y is not used). All randomness is drawn from rng. It
	// returns ctx.Err() once ctx is done (training checks it every
	// epoch).
	Estimate(ctx context.Context, train, op Data, rng *rand.Rand) (float64, error)
}

// MethodNames lists the methods NewMethod knows, in the column order of
// the paper's Tables 1 and 3 (baselines, then the one-step objectives),
// with the naive one-step check model last.
var MethodNames = []string{"m2v", "mvn", "ens", "rvn", "rvnne", "m2rvn", "k", "kstar", "l", "naive"}

// NewMethod returns the named method with the networks and training of
// cfg (cfg.Objective is ignored: the name chooses it).
//
//   - kstar, k, l: the one-step check model trained on K*, K or L.
//   - kstar-cal: kstar with its estimate calibrated by cross-fitting on
//     the training data (see Calibration), as `genlens mse fit` does;
//     not in MethodNames (it trains cfg.Folds + 1 networks).
//   - naive: a check model h' regressing f's squared error (y - f)²,
//     estimating mean h'(x) (the paper's Section 3.1; NannyML's direct
//     loss estimation).
//   - m2v: a mean network trained on squared error, then a variance
//     network trained on the Gaussian likelihood with the mean fixed.
//   - mvn: mean and variance networks trained jointly on the Gaussian
//     likelihood (Nix & Weigend, 1994).
//   - ens: 10 MVNs from different initialisations, combined as a
//     uniform mixture (Lakshminarayanan et al., 2017).
//   - rvn, rvnne, m2rvn: Skafte et al. (2019); see the rvn type.
//
// Two-step methods estimate mean over op of (u(x) - f(x))² + σ²(x).
func NewMethod(name string, cfg Config) (Method, error) {
	switch strings.ToLower(name) {
	case "kstar", "k*":
		c := cfg
		c.Objective = KStar
		return oneStep{"kstar", c}, nil
	case "k":
		c := cfg
		c.Objective = K
		return oneStep{"k", c}, nil
	case "l":
		c := cfg
		c.Objective = L
		return oneStep{"l", c}, nil
	case "kstar-cal":
		c := cfg
		c.Objective = KStar
		if c.Folds < 2 {
			c.Folds = DefaultFolds
		}
		return calibrated{"kstar-cal", c}, nil
	case "naive":
		return naive{cfg}, nil
	case "m2v":
		return twoStep{"m2v", cfg, m2v}, nil
	case "mvn":
		return twoStep{"mvn", cfg, mvn}, nil
	case "ens":
		return twoStep{"ens", cfg, ens}, nil
	case "rvn":
		return twoStep{"rvn", cfg, rvn{extrapolate: true}.fit}, nil
	case "rvnne":
		return twoStep{"rvnne", cfg, rvn{}.fit}, nil
	case "m2rvn":
		return twoStep{"m2rvn", cfg, rvn{extrapolate: true, fixMean: true}.fit}, nil
	}
	return nil, fmt.Errorf("checkmodel: unknown method %q (want one of %s)", name, strings.Join(MethodNames, ", "))
}

type oneStep struct {
	name string
	cfg  Config
}

func (m oneStep) Name() string { return m.name }

func (m oneStep) Estimate(ctx context.Context, train, op Data, rng *rand.Rand) (float64, error) {
	h, err := FitNet(ctx, train.X, train.Y, train.F, m.cfg, rng)
	if err != nil {
		return 0, err
	}
	return EstimateMSE(h.Predict1(op.X), op.F), nil
}

// calibrated is a one-step method whose estimate is calibrated as Fit's.
type calibrated struct {
	name string
	cfg  Config
}

func (m calibrated) Name() string { return m.name }

func (m calibrated) Estimate(ctx context.Context, train, op Data, rng *rand.Rand) (float64, error) {
	// Choose the count once, as Fit does, so that the fold networks
	// train the final network's count.
	cfg, _, err := resolveEpochs(ctx, train.X, train.Y, train.F, m.cfg, rng)
	if err != nil {
		return 0, err
	}
	h, err := FitNet(ctx, train.X, train.Y, train.F, cfg, rng)
	if err != nil {
		return 0, err
	}
	n, _ := train.X.Dims()
	folds := min(cfg.Folds, n/2)
	if folds < 2 {
		return EstimateMSE(h.Predict1(op.X), op.F), nil
	}
	c, err := CrossFit(ctx, train.X, train.Y, train.F, cfg, folds, rng)
	if err != nil {
		return 0, err
	}
	rawIn, realIn := sums(h.Predict1(train.X), train.Y, train.F)
	c.calibrate(rawIn, realIn)
	return c.Factor * EstimateMSE(h.Predict1(op.X), op.F), nil
}

type naive struct{ cfg Config }

func (naive) Name() string { return "naive" }

func (m naive) Estimate(ctx context.Context, train, op Data, rng *rand.Rand) (float64, error) {
	if err := checkXYF(train.X, train.Y, train.F); err != nil {
		return 0, err
	}
	sq := make([]float64, len(train.Y))
	for i := range sq {
		d := train.Y[i] - train.F[i]
		sq[i] = d * d
	}
	_, d := train.X.Dims()
	h, err := nn.New(m.cfg.sizes(d), rng)
	if err != nil {
		return 0, err
	}
	if _, err := nn.Fit(ctx, h, train.X, nn.MSE(sq), m.cfg.Train, rng); err != nil {
		return 0, fmt.Errorf("checkmodel: naive: %w", err)
	}
	return mean(h.Predict1(op.X)), nil
}

// meanVar predicts the conditional mean u(x) and variance σ²(x) of the
// target at the rows of x.
type meanVar func(x *mat.Dense) (u, v []float64)

// twoStep is a two-step method: fit trains mean and variance models on
// train, and the estimate is mean (u - f)² + σ² over the operational
// inputs (Eq. 2).
type twoStep struct {
	name string
	cfg  Config
	fit  func(ctx context.Context, train Data, cfg Config, rng *rand.Rand) (meanVar, error)
}

func (m twoStep) Name() string { return m.name }

func (m twoStep) Estimate(ctx context.Context, train, op Data, rng *rand.Rand) (float64, error) {
	if err := checkXYF(train.X, train.Y, train.F); err != nil {
		return 0, err
	}
	mv, err := m.fit(ctx, train, m.cfg, rng)
	if err != nil {
		return 0, fmt.Errorf("checkmodel: %s: %w", m.name, err)
	}
	u, v := mv(op.X)
	var s float64
	for i := range u {
		d := u[i] - op.F[i]
		s += d*d + v[i]
	}
	return s / float64(len(u)), nil
}

func mean(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// minVariance bounds the predicted variances away from zero, as PyTorch's
// GaussianNLLLoss clamps them (eps = 1e-6).
const minVariance = 1e-6

// softplus is PyTorch's Softplus (beta 1, threshold 20): log(1 + e^z),
// and z itself above the threshold where the two agree to double
// precision.
func softplus(z float64) float64 {
	if z > 20 {
		return z
	}
	return math.Log1p(math.Exp(z))
}

// sigmoid is the derivative of softplus.
func sigmoid(z float64) float64 { return 1 / (1 + math.Exp(-z)) }

// variance maps a variance network's raw output to σ² > 0.
func variance(z float64) float64 { return softplus(z) + minVariance }

// gaussianNLL returns the Gaussian negative log-likelihood (without the
// constant) of y under N(u, σ²) with σ² = variance(z), and its
// derivatives with respect to u and z.
func gaussianNLL(y, u, z float64) (nll, du, dz float64) {
	v := variance(z)
	r := y - u
	nll = 0.5*math.Log(v) + r*r/(2*v)
	du = -r / v
	dz = (0.5/v - r*r/(2*v*v)) * sigmoid(z)
	return nll, du, dz
}

// newPair returns trainers for a mean and a variance network on x.
func newPair(x *mat.Dense, cfg Config, train nn.TrainConfig, rng *rand.Rand) (tu, tv *nn.Trainer, err error) {
	_, d := x.Dims()
	mu, err := nn.New(cfg.sizes(d), rng)
	if err != nil {
		return nil, nil, err
	}
	va, err := nn.New(cfg.sizes(d), rng)
	if err != nil {
		return nil, nil, err
	}
	if tu, err = nn.NewTrainer(mu, x, train, rng); err != nil {
		return nil, nil, err
	}
	if tv, err = nn.NewTrainer(va, x, train, rng); err != nil {
		return nil, nil, err
	}
	return tu, tv, nil
}

// predictMeanVar returns the meanVar of a mean and a variance network.
func predictMeanVar(mu, va *nn.MLP) meanVar {
	return func(x *mat.Dense) ([]float64, []float64) {
		u := mu.Predict1(x)
		v := va.Predict1(x)
		for i := range v {
			v[i] = variance(v[i])
		}
		return u, v
	}
}

// m2v trains the mean network on squared error first, then the variance
// network on the Gaussian likelihood with the mean fixed.
func m2v(ctx context.Context, train Data, cfg Config, rng *rand.Rand) (meanVar, error) {
	tu, tv, err := newPair(train.X, cfg, cfg.Train, rng)
	if err != nil {
		return nil, err
	}
	if _, err := tu.Fit(ctx, nn.MSE(train.Y)); err != nil {
		return nil, err
	}
	u := tu.Net.Predict1(train.X)
	loss := nn.PerSample(func(i int, out, grad []float64) float64 {
		nll, _, dz := gaussianNLL(train.Y[i], u[i], out[0])
		grad[0] = dz
		return nll
	})
	if _, err := tv.Fit(ctx, loss); err != nil {
		return nil, err
	}
	return predictMeanVar(tu.Net, tv.Net), nil
}

// mvn trains the mean and variance networks jointly on the Gaussian
// likelihood (Nix & Weigend, 1994), full batch.
func mvn(ctx context.Context, train Data, cfg Config, rng *rand.Rand) (meanVar, error) {
	tu, tv, err := newPair(train.X, cfg, cfg.Train, rng)
	if err != nil {
		return nil, err
	}
	if cfg.Train.BatchSize != 0 && cfg.Train.BatchSize < len(train.Y) {
		return nil, fmt.Errorf("mini-batch training is not implemented for the joint networks")
	}
	n := float64(len(train.Y))
	for e := 0; e < cfg.Train.Epochs; e++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		u := tu.Forward(nil)
		z := tv.Forward(nil)
		gu, gz := tu.OutputGrad(), tv.OutputGrad()
		var total float64
		for i, y := range train.Y {
			nll, du, dz := gaussianNLL(y, u[i], z[i])
			total += nll
			gu[i], gz[i] = du/n, dz/n
		}
		if math.IsNaN(total) || math.IsInf(total, 0) {
			return nil, fmt.Errorf("likelihood is %v at epoch %d", total, e+1)
		}
		tu.Backward(gu)
		tv.Backward(gz)
		tu.Step()
		tv.Step()
	}
	return predictMeanVar(tu.Net, tv.Net), nil
}

// ensembleSize is the number of MVNs in ENS (the paper's Section 4.1).
const ensembleSize = 10

// ens is a deep ensemble of MVNs combined as a uniform mixture:
// u = mean of u_k, σ² = mean of (σ²_k + u_k²) - u².
func ens(ctx context.Context, train Data, cfg Config, rng *rand.Rand) (meanVar, error) {
	members := make([]meanVar, ensembleSize)
	for k := range members {
		mv, err := mvn(ctx, train, cfg, rng)
		if err != nil {
			return nil, fmt.Errorf("member %d: %w", k+1, err)
		}
		members[k] = mv
	}
	return func(x *mat.Dense) ([]float64, []float64) {
		n, _ := x.Dims()
		u, second := make([]float64, n), make([]float64, n)
		for _, mv := range members {
			uk, vk := mv(x)
			for i := range u {
				u[i] += uk[i] / ensembleSize
				second[i] += (vk[i] + uk[i]*uk[i]) / ensembleSize
			}
		}
		for i := range u {
			second[i] = math.Max(second[i]-u[i]*u[i], minVariance)
		}
		return u, second
	}, nil
}
