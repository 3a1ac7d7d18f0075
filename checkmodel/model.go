package checkmodel

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"

	"gonum.org/v1/gonum/mat"

	"genlens/nn"
)

// FormatVersion identifies the layout of a serialised Model.
const FormatVersion = "genlens-checkmodel/1"

// Model is a trained check model with everything needed to apply it to
// new data: the network, the scaling learnt from the training data and
// the names of the columns it reads. It marshals to JSON as the model file
// of `genlens mse fit`.
type Model struct {
	Format    string    `json:"format"`
	Objective Objective `json:"objective"`
	Lambda    float64   `json:"lambda"`
	Eps       float64   `json:"eps"`

	// Columns describes the table the model was fitted on, so that data
	// with other columns can be refused. Checkmodel stores it; the
	// caller (the CLI) fills it and checks it.
	Columns Columns `json:"columns"`

	// XMean and XScale standardise each feature: x' = (x - mean)/scale.
	XMean  []float64 `json:"x_mean"`
	XScale []float64 `json:"x_scale"`
	// YMean and YScale standardise targets and predictions alike, as
	// the seed scales y with training statistics.
	YMean  float64 `json:"y_mean"`
	YScale float64 `json:"y_scale"`

	Net      *nn.MLP  `json:"network"`
	Training Training `json:"training"`

	// Reference summarises the labelled data the model was fitted on.
	Reference Reference `json:"reference"`
}

// Columns names the inputs of a model: its features in network order, the
// column with the predictions of f and the target it was trained on. For
// a file without a header the names are column indices ("0", "1", ...).
type Columns struct {
	Features   []string `json:"features"`
	Prediction string   `json:"prediction"`
	Target     string   `json:"target"`
	// Header tells whether the names are header names (true) or
	// 0-based column indices of a header-less file (false).
	Header bool `json:"header"`
	// Count is the number of columns of the training file.
	Count int `json:"count"`
}

// Training records how the network was trained.
type Training struct {
	Rows        int     `json:"rows"`
	Epochs      int     `json:"epochs"`
	BatchSize   int     `json:"batch_size"`
	LR          float64 `json:"lr"`
	WeightDecay float64 `json:"weight_decay"`
	Seed        uint64  `json:"seed"`
	// FinalLoss is the objective after the last epoch, in standardised
	// units.
	FinalLoss float64 `json:"final_loss"`
}

// Reference holds the realised squared errors (y - f)² of the rows the
// model was fitted on, in target units and row order, from which
// monitoring derives alert thresholds, and the realised and estimated MSE
// there.
type Reference struct {
	SquaredErrors []float64 `json:"squared_errors"`
	RealizedMSE   float64   `json:"realized_mse"`
	EstimatedMSE  float64   `json:"estimated_mse"`
}

// Fit trains a check model on the rows of x (raw features), targets y and
// the predictions f of the model under test there. Columns.Features is
// set to the column indices "0", "1", ...; callers that know the column
// names set Columns afterwards. Features are
// standardised per column and y and f by y's mean and standard deviation,
// all with these training statistics (ddof 0); the network is then
// trained by FitNet. The same seed gives the same model bit for bit.
func Fit(x *mat.Dense, y, f []float64, cfg Config, seed uint64) (*Model, error) {
	if err := checkXYF(x, y, f); err != nil {
		return nil, err
	}
	n, d := x.Dims()
	m := &Model{
		Format: FormatVersion, Objective: cfg.Objective, Lambda: cfg.Lambda, Eps: cfg.Eps,
		XMean: make([]float64, d), XScale: make([]float64, d),
	}
	col := make([]float64, n)
	for j := 0; j < d; j++ {
		mat.Col(col, j, x)
		m.XMean[j], m.XScale[j] = standardize(col)
	}
	m.YMean, m.YScale = standardize(y)
	ys, fs := make([]float64, n), make([]float64, n)
	for i := range y {
		ys[i] = (y[i] - m.YMean) / m.YScale
		fs[i] = (f[i] - m.YMean) / m.YScale
	}
	rng := rand.New(rand.NewPCG(seed, 0x636865636b))
	h, final, err := fitNet(m.scaleX(x), ys, fs, cfg, rng)
	if err != nil {
		return nil, err
	}
	m.Net = h
	m.Columns.Features = make([]string, d)
	for j := range m.Columns.Features {
		m.Columns.Features[j] = strconv.Itoa(j)
	}
	m.Columns.Count = d
	m.Training = Training{Rows: n, Epochs: cfg.Train.Epochs, BatchSize: cfg.Train.BatchSize,
		LR: cfg.Train.LR, WeightDecay: cfg.Train.WeightDecay, Seed: seed, FinalLoss: final}
	sq := make([]float64, n)
	var realized float64
	for i := range y {
		sq[i] = (y[i] - f[i]) * (y[i] - f[i])
		realized += sq[i]
	}
	est, err := m.Estimate(x, f)
	if err != nil {
		return nil, err
	}
	m.Reference = Reference{SquaredErrors: sq, RealizedMSE: realized / float64(n), EstimatedMSE: est}
	return m, nil
}

// scaleX returns a standardised copy of x.
func (m *Model) scaleX(x *mat.Dense) *mat.Dense {
	n, d := x.Dims()
	xs := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			xs.Set(i, j, (x.At(i, j)-m.XMean[j])/m.XScale[j])
		}
	}
	return xs
}

// Check returns the check model's predictions h(x) for the rows of x, in
// target units.
func (m *Model) Check(x *mat.Dense) ([]float64, error) {
	_, d := x.Dims()
	if d != len(m.XMean) {
		return nil, fmt.Errorf("checkmodel: data has %d features, the model %d", d, len(m.XMean))
	}
	h := m.Net.Predict1(m.scaleX(x))
	for i := range h {
		h[i] = m.YScale*h[i] + m.YMean
	}
	return h, nil
}

// RowEstimates returns 2 (h(x) - f(x))² for every row, in squared target
// units: each row's contribution to the estimated MSE, whose mean over a
// chunk of rows is that chunk's estimate (Eq. 11).
func (m *Model) RowEstimates(x *mat.Dense, f []float64) ([]float64, error) {
	n, _ := x.Dims()
	if len(f) != n {
		return nil, fmt.Errorf("checkmodel: %d rows and %d predictions", n, len(f))
	}
	h, err := m.Check(x)
	if err != nil {
		return nil, err
	}
	for i := range h {
		d := h[i] - f[i]
		h[i] = 2 * d * d
	}
	return h, nil
}

// Estimate returns the estimated MSE of f on the rows of x (Eq. 11), in
// squared target units.
func (m *Model) Estimate(x *mat.Dense, f []float64) (float64, error) {
	r, err := m.RowEstimates(x, f)
	if err != nil {
		return 0, err
	}
	var s float64
	for _, v := range r {
		s += v
	}
	return s / float64(len(r)), nil
}

// Validate reports whether a model (typically read from a file) is
// complete and consistent, so that applying it cannot fail halfway.
func (m *Model) Validate() error {
	if m.Format != FormatVersion {
		return fmt.Errorf("checkmodel: format %q, want %q", m.Format, FormatVersion)
	}
	if _, err := ParseObjective(string(m.Objective)); err != nil {
		return err
	}
	if m.Net == nil {
		return errors.New("checkmodel: no network")
	}
	if err := m.Net.Validate(); err != nil {
		return err
	}
	d := m.Net.Inputs()
	if m.Net.Outputs() != 1 {
		return fmt.Errorf("checkmodel: network has %d outputs, want 1", m.Net.Outputs())
	}
	if len(m.XMean) != d || len(m.XScale) != d || len(m.Columns.Features) != d {
		return fmt.Errorf("checkmodel: network has %d inputs but %d feature names, %d means and %d scales",
			d, len(m.Columns.Features), len(m.XMean), len(m.XScale))
	}
	for j := 0; j < d; j++ {
		if !finite(m.XMean[j]) || !finite(m.XScale[j]) || m.XScale[j] <= 0 {
			return fmt.Errorf("checkmodel: feature %q has mean %v and scale %v", m.Columns.Features[j], m.XMean[j], m.XScale[j])
		}
	}
	if !finite(m.YMean) || !finite(m.YScale) || m.YScale <= 0 {
		return fmt.Errorf("checkmodel: target mean %v and scale %v", m.YMean, m.YScale)
	}
	for i, v := range m.Reference.SquaredErrors {
		if !finite(v) || v < 0 {
			return fmt.Errorf("checkmodel: reference squared error %d is %v", i, v)
		}
	}
	return nil
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
