package checkmodel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/nn"
	"github.com/genlens/genlens/metric/monitor"
)

// FormatVersion identifies the layout of a serialised Model.
const FormatVersion = "genlens-checkmodel/1"

// Probe reports whether a file exists at path and, if so, whether it
// holds a serialised Model (its "format" is FormatVersion), so that a
// writer can refuse to replace a file that is not one. The error, if
// any, is the reason the file could not be read, without its path.
func Probe(path string) (exists, model bool, err error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, false, nil
	}
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		return true, false, pe.Err
	}
	if err != nil {
		return true, false, err
	}
	var probe struct {
		Format string `json:"format"`
	}
	return true, json.Unmarshal(b, &probe) == nil && probe.Format == FormatVersion, nil
}

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
	// with other columns can be refused (see Inputs). Fit names the
	// columns by index; a caller that read a table sets the names.
	Columns Columns `json:"columns"`

	// XMean and XScale standardise each feature: x' = (x - mean)/scale.
	XMean  []float64 `json:"x_mean"`
	XScale []float64 `json:"x_scale"`
	// YMean and YScale standardise targets and predictions alike, as
	// the paper scales y with training statistics.
	YMean  float64 `json:"y_mean"`
	YScale float64 `json:"y_scale"`

	Net      *nn.MLP  `json:"network"`
	Training Training `json:"training"`

	// Reference summarises the labelled data the model was fitted on.
	Reference Reference `json:"reference"`

	// Calibration scales the raw estimates to the realised MSE measured
	// on held-out reference folds (see Calibration). Every estimate of
	// RowEstimates and Estimate is calibrated.
	Calibration Calibration `json:"calibration"`

	// Drift describes the reference rows' features for monitoring:
	// their ranges (extrapolation), the reconstruction error's principal
	// axes and the values themselves (univariate drift). Files written
	// before it was recorded have none, and still load.
	Drift *monitor.DriftModel `json:"drift,omitempty"`
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
	// EpochSelection is how Epochs was chosen ("fixed" or
	// "validation", see EpochSelection); empty in files written before
	// the choice existed, which trained a fixed count.
	EpochSelection EpochSelection `json:"epoch_selection,omitempty"`
	// EpochBound is the largest count validation considered (0 for a
	// fixed count).
	EpochBound int `json:"epoch_bound,omitempty"`
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
	// EstimatedMSE is the in-sample estimate, calibrated.
	EstimatedMSE float64 `json:"estimated_mse"`
	// RawEstimatedMSE is the in-sample estimate before calibration.
	RawEstimatedMSE float64 `json:"raw_estimated_mse"`
	// HeldOutEstimates is every row's estimate by the cross-fitting
	// network that did not train on it, in squared target units,
	// scaled so that their mean is the realised MSE of the held-out
	// rows (as calibration puts production estimates on that scale):
	// monitoring calibrates the interval of a chunk's estimate on it.
	// Files written before it was recorded, or fitted without folds,
	// have none; their intervals are the sampling band.
	HeldOutEstimates []float64 `json:"held_out_estimates,omitempty"`
}

// Fit trains a check model on the rows of x (raw features), targets y and
// the predictions f of the model under test there. Columns.Features is
// set to the column indices "0", "1", ...; callers that know the column
// names set Columns afterwards. Features are
// standardised per column and y and f by y's mean and standard deviation,
// all with these training statistics (ddof 0); the network is then
// trained by FitNet, for a count chosen once on these rows when cfg.Epochs
// is ValidationEpochs (the cross-fitting folds train the same count).
// The same seed gives the same model bit for bit.
// Training stops with ctx.Err() once ctx is done.
func Fit(ctx context.Context, x *mat.Dense, y, f []float64, cfg Config, seed uint64) (*Model, error) {
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
	xs := m.scaleX(x)
	sel, bound := FixedEpochs, 0
	// Validation needs ten rows (two held out); fewer train the fixed
	// count, and the model file says so.
	// A generator of its own, so that the final network's
	// initialisation does not depend on the selection.
	vrng := rand.New(rand.NewPCG(seed, 0x65706f6368))
	cfg, choice, err := resolveEpochs(ctx, xs, ys, fs, cfg, vrng)
	if err != nil {
		return nil, err
	}
	if choice.Bound > 0 {
		sel, bound = ValidationEpochs, choice.Bound
	}
	rng := rand.New(rand.NewPCG(seed, 0x636865636b))
	h, final, err := fitNet(ctx, xs, ys, fs, cfg, rng)
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
		LR: cfg.Train.LR, WeightDecay: cfg.Train.WeightDecay, Seed: seed, FinalLoss: final,
		EpochSelection: sel, EpochBound: bound}
	// Fewer folds on small data (each needs two rows); with fewer than
	// four rows the estimates stay uncalibrated (Calibration.Folds 0).
	var held []float64
	if folds := min(cfg.Folds, n/2); folds >= 2 {
		// The same standardised data, and a generator of its own so that
		// the final network does not depend on the number of folds.
		crng := rand.New(rand.NewPCG(seed, 0x63616c6962))
		m.Calibration, held, err = crossFit(ctx, m.scaleX(x), ys, fs, cfg, folds, crng)
		if err != nil {
			return nil, err
		}
		if c := m.Calibration; c.HeldOutEstimated > 0 {
			k := c.HeldOutRealized / c.HeldOutEstimated
			for i := range held {
				held[i] *= k * m.YScale * m.YScale
			}
		} else {
			held = nil
		}
		rawIn, realIn := sums(h.Predict1(m.scaleX(x)), ys, fs)
		m.Calibration.calibrate(rawIn, realIn)
		// The ratio is scale-free; the MSEs are stored in target units.
		s2 := m.YScale * m.YScale
		m.Calibration.HeldOutRealized *= s2
		m.Calibration.HeldOutEstimated *= s2
	}
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
	c := m.Calibration.factor()
	m.Reference = Reference{SquaredErrors: sq, RealizedMSE: realized / float64(n), EstimatedMSE: est, RawEstimatedMSE: est / c, HeldOutEstimates: held}
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

// RowEstimates returns c · 2 (h(x) - f(x))² for every row, in squared
// target units, with c the calibration factor: each row's contribution to
// the estimated MSE, whose mean over a chunk of rows is that chunk's
// estimate (Eq. 11, calibrated).
func (m *Model) RowEstimates(x *mat.Dense, f []float64) ([]float64, error) {
	n, _ := x.Dims()
	if len(f) != n {
		return nil, fmt.Errorf("checkmodel: %d rows and %d predictions", n, len(f))
	}
	h, err := m.Check(x)
	if err != nil {
		return nil, err
	}
	c := m.Calibration.factor()
	for i := range h {
		d := h[i] - f[i]
		h[i] = c * 2 * d * d
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
	if msg := m.problem(); msg != "" {
		return errors.New("checkmodel: " + msg)
	}
	return nil
}

// problem says what makes m unusable, or "" when nothing does.
func (m *Model) problem() string {
	if m.Format != FormatVersion {
		return fmt.Sprintf("format %q, want %q", m.Format, FormatVersion)
	}
	if _, err := ParseObjective(string(m.Objective)); err != nil {
		return fmt.Sprintf("unknown objective %q (want kstar, k or l)", m.Objective)
	}
	if sel := m.Training.EpochSelection; sel != "" && sel != FixedEpochs && sel != ValidationEpochs {
		return fmt.Sprintf("unknown epoch selection %q (want fixed or validation)", sel)
	}
	if m.Net == nil {
		return "no network"
	}
	if err := m.Net.Validate(); err != nil {
		return err.Error()
	}
	d := m.Net.Inputs()
	if m.Net.Outputs() != 1 {
		return fmt.Sprintf("network has %d outputs, want 1", m.Net.Outputs())
	}
	if len(m.XMean) != d || len(m.XScale) != d || len(m.Columns.Features) != d {
		return fmt.Sprintf("network has %d inputs but %d feature names, %d means and %d scales",
			d, len(m.Columns.Features), len(m.XMean), len(m.XScale))
	}
	// Columns are found by name: two roles under one name would read one
	// column twice.
	role := map[string]string{}
	for _, c := range []struct{ name, role string }{{m.Columns.Target, "the target"}, {m.Columns.Prediction, "the prediction"}} {
		if c.name != "" {
			if r, ok := role[c.name]; ok {
				return fmt.Sprintf("column %q is both %s and %s", c.name, r, c.role)
			}
			role[c.name] = c.role
		}
	}
	for j, f := range m.Columns.Features {
		if r, ok := role[f]; ok {
			return fmt.Sprintf("feature %d, %q, is also %s: one column would be read twice", j, f, r)
		}
		role[f] = fmt.Sprintf("feature %d", j)
	}
	for j := 0; j < d; j++ {
		if !finite(m.XMean[j]) || !finite(m.XScale[j]) || m.XScale[j] <= 0 {
			return fmt.Sprintf("feature %q has mean %v and scale %v", m.Columns.Features[j], m.XMean[j], m.XScale[j])
		}
	}
	if !finite(m.YMean) || !finite(m.YScale) || m.YScale <= 0 {
		return fmt.Sprintf("target mean %v and scale %v", m.YMean, m.YScale)
	}
	if cf := m.Calibration.Factor; !finite(cf) || cf < 0 {
		return fmt.Sprintf("calibration factor %v", cf)
	}
	if m.Drift != nil {
		if err := m.Drift.Validate(m.Columns.Features); err != nil {
			return err.Error()
		}
	}
	for i, v := range m.Reference.SquaredErrors {
		if !finite(v) || v < 0 {
			return fmt.Sprintf("reference squared error %d is %v", i, v)
		}
	}
	if h := m.Reference.HeldOutEstimates; h != nil {
		if len(h) != len(m.Reference.SquaredErrors) {
			return fmt.Sprintf("%d held-out estimates for %d reference rows", len(h), len(m.Reference.SquaredErrors))
		}
		for i, v := range h {
			if !finite(v) || v < 0 {
				return fmt.Sprintf("held-out estimate %d is %v", i, v)
			}
		}
	}
	return ""
}

// DecodeModel parses a model file (the JSON of `genlens mse fit`) named
// name and validates it, so that applying it cannot fail halfway. Every
// problem with the file is a *fault.InputError on name: a model file is
// user input like any data file.
func DecodeModel(name string, b []byte) (*Model, error) {
	var m Model
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, &fault.InputError{File: name, Msg: "not a check model file: " + err.Error()}
	}
	if msg := m.problem(); msg != "" {
		return nil, &fault.InputError{File: name, Msg: msg}
	}
	if m.Columns.Prediction == "" {
		return nil, &fault.InputError{File: name, Msg: "the check model names no prediction column"}
	}
	return &m, nil
}

// Inputs finds the model's feature and prediction columns in t, the
// operational data, and parses them: x in the model's feature order and
// the predictions f. Data whose columns do not match the model are
// refused rather than guessed at: a model fitted on a file with a header
// finds its columns by name, one fitted on a header-less file by
// position, which needs the same number of columns. modelName names the
// model in the messages; every error is a *fault.InputError.
func (m *Model) Inputs(t *dataio.Table, modelName string) (*mat.Dense, []float64, error) {
	c := m.Columns
	if c.Header != (t.Header != nil) {
		has := map[bool]string{true: "a header row", false: "no header row"}
		return nil, nil, &fault.InputError{File: t.File, Msg: fmt.Sprintf("has %s, but the check model %s was fitted on a file with %s", has[t.Header != nil], modelName, has[c.Header])}
	}
	if !c.Header && t.Cols() != c.Count {
		return nil, nil, &fault.InputError{File: t.File, Msg: fmt.Sprintf("has %d columns, but the check model %s was fitted on a header-less file with %d columns (columns are matched by position)", t.Cols(), modelName, c.Count)}
	}
	find := func(name, role string) (int, error) {
		if c.Header {
			if j := slices.Index(t.Header, name); j >= 0 {
				return j, nil
			}
			return 0, &fault.InputError{File: t.File, Msg: fmt.Sprintf("no column %q (the %s of check model %s); columns: %s", name, role, modelName, strings.Join(t.Header, ", "))}
		}
		j, err := strconv.Atoi(name)
		if err != nil || j < 0 || j >= t.Cols() {
			return 0, &fault.InputError{File: modelName, Msg: fmt.Sprintf("bad column index %q", name)}
		}
		return j, nil
	}
	var cols []int
	for _, name := range c.Features {
		j, err := find(name, "feature")
		if err != nil {
			return nil, nil, err
		}
		cols = append(cols, j)
	}
	pc, err := find(c.Prediction, "prediction column")
	if err != nil {
		return nil, nil, err
	}
	x, err := t.Matrix(cols)
	if err != nil {
		return nil, nil, err
	}
	pred, err := t.Floats(pc, false)
	if err != nil {
		return nil, nil, err
	}
	return x, pred, nil
}

// Diverged reports a fit that must not be used: its raw in-sample estimate
// of f's MSE is not finite, or over 100 times the realised MSE. A check
// model trained with too high a learning rate gives itself away there,
// and saving it as if it worked would make every later estimate wrong.
func (r Reference) Diverged() bool {
	est, real := r.raw(), r.RealizedMSE
	return math.IsNaN(est) || math.IsInf(est, 0) || est > 100*real && real > 0
}

// Doubtful reports a raw in-sample estimate more than 10 times away from
// the realised MSE (either way): usable, but the check model may be
// under-trained (too few epochs) or unstable (too high a learning rate).
func (r Reference) Doubtful() bool {
	est, real := r.raw(), r.RealizedMSE
	return real > 0 && (est > 10*real || est < real/10)
}

// raw is the uncalibrated in-sample estimate: calibration must not hide a
// network that failed (a factor of 1e-39 would bring back any divergence).
func (r Reference) raw() float64 {
	if r.RawEstimatedMSE != 0 {
		return r.RawEstimatedMSE
	}
	return r.EstimatedMSE
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
