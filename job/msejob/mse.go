package msejob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/fields"
	"github.com/genlens/genlens/internal/format/jsonnum"
	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/metric/checkmodel"
	"github.com/genlens/genlens/metric/monitor"
)

// The MSE jobs estimate the mean squared error of a deployed regression
// model f on operational data before its labels arrive, with a check
// model h trained by the one-step objective of "A one-step MSE estimation
// of models in production" (see package checkmodel): Fit trains and
// saves h, Estimate applies it chunk by chunk with thresholds and
// alerts (package monitor), Bench reproduces the paper's comparison
// with the two-step baselines.

// FitRequest is a request of `genlens mse fit`: train a check model
// on labelled reference rows that hold the target and f's prediction.
// Start from NewFitRequest, which holds the command line's defaults.
type FitRequest struct {
	Train      string   `json:"train" help:"labelled reference data (CSV)"`
	Target     string   `json:"target" help:"target column (name, or 0-based index without a header)"` // column name, or 0-based index without a header
	Prediction string   `json:"prediction" help:"column holding the deployed model's prediction f(x)"` // the column of f(x)
	Features   []string `json:"features,omitempty" help:"feature columns (default: all other columns)"`
	Header     string   `json:"header" help:"does the first row hold column names: auto, yes or no (estimate reads its data the same way)"` // auto, yes or no
	Objective  string   `json:"objective" help:"training objective: kstar, k or l"`
	Lambda     float64  `json:"lambda" help:"weight of the regulariser R in objective l"`
	// Epochs is the number of training epochs with EpochSelection
	// "fixed", the largest number considered with "validation".
	Epochs int `json:"epochs" help:"training epochs (full batch); with {epoch_selection} validation, the most tried"`
	// EpochSelection is "fixed" (train Epochs epochs, the paper's
	// setting) or "validation" (choose the count up to Epochs by the
	// objective on 20% held-out reference rows, see
	// checkmodel.ChooseEpochs).
	EpochSelection string  `json:"epoch_selection" help:"fixed: train {epochs} epochs (the paper's 200); validation: choose the count by the objective on 20% of the reference rows held out, then train on all"`
	LR             float64 `json:"lr" help:"Adam learning rate"`
	Seed           uint64  `json:"seed" help:"random seed (weights); the same seed gives the same model"`
	// Folds is the number of cross-fitting folds that calibrate the
	// estimates to the realised MSE (checkmodel.Calibration); 0 turns
	// calibration off (the paper's raw Eq. 11).
	Folds int `json:"folds" help:"cross-fitting folds that calibrate the estimates to the realised MSE on held-out reference rows (which must not be the rows f was trained on); 0: uncalibrated (the paper's Eq. 11)"`
	// Model names the model file; the result carries it, and the
	// transport stores the model there (see FitResult.WriteModel).
	Model string `json:"model" help:"where to write the check model (JSON)"`

	job.CSVOptions // sep: how the fields of CSV inputs are separated
}

// NewFitRequest returns a request with the command line's defaults:
// the paper's objective K*, λ = 100, 200 epochs of Adam at 0.01.
func NewFitRequest() FitRequest {
	c := checkmodel.DefaultConfig()
	return FitRequest{Header: "auto", Objective: string(c.Objective), Lambda: c.Lambda,
		Epochs: c.Train.Epochs, EpochSelection: string(c.Epochs), LR: c.Train.LR, Seed: 1, Folds: c.Folds}
}

// Validate checks the fields that need no input file.
func (r *FitRequest) Validate() (verr error) {
	defer func() { verr = job.WithDefault(verr, r, NewFitRequest()) }()
	if err := job.CheckLimits("mse fit", job.Lim("features", len(r.Features), job.MaxListLen), job.Lim("epochs", r.Epochs, maxMSEEpochs), job.Lim("folds", r.Folds, maxFolds)); err != nil {
		return err
	}
	if err := r.CSVOptions.ValidateSep(); err != nil {
		return err
	}
	_, _, err := r.options()
	return err
}

func (r *FitRequest) options() (checkmodel.Config, dataio.Header, error) {
	cfg := checkmodel.DefaultConfig()
	for _, f := range []struct{ field, val string }{{"train", r.Train}, {"target", r.Target}, {"prediction", r.Prediction}, {"model", r.Model}} {
		if f.val == "" {
			return cfg, 0, fault.Fieldf(f.field, "mse fit: {%s} is required", f.field)
		}
	}
	obj, err := checkmodel.ParseObjective(r.Objective)
	sel, selErr := checkmodel.ParseEpochSelection(r.EpochSelection)
	switch {
	case err != nil:
		return cfg, 0, fault.Fieldf("objective", "%s", err)
	case selErr != nil:
		return cfg, 0, fault.Fieldf("epoch_selection", "mse fit: {epoch_selection} %q must be fixed or validation", r.EpochSelection)
	case r.Epochs < 1 || r.Epochs > maxMSEEpochs:
		return cfg, 0, fault.Fieldf("epochs", "mse fit: {epochs} %d must be in [1, %d]", r.Epochs, maxMSEEpochs)
	case sel == checkmodel.ValidationEpochs && r.Epochs < checkmodel.ValidationEvery:
		return cfg, 0, fault.Fieldf("epochs", "mse fit: {epochs} %d is below %d, the interval at which {epoch_selection} validation measures held-out rows", r.Epochs, checkmodel.ValidationEvery)
	case r.Folds < 0 || r.Folds == 1 || r.Folds > 100:
		return cfg, 0, fault.Fieldf("folds", "mse fit: {folds} %d must be 0 (no calibration) or in [2, 100]", r.Folds)
	case !(r.LR > 0) || math.IsInf(r.LR, 0):
		return cfg, 0, fault.Fieldf("lr", "mse fit: {lr} %v must be positive", r.LR)
	case !(r.Lambda >= 0) || math.IsInf(r.Lambda, 0):
		return cfg, 0, fault.Fieldf("lambda", "mse fit: {lambda} %v must be non-negative", r.Lambda)
	}
	h, err := mseHeader(r.Header)
	cfg.Objective, cfg.Lambda, cfg.Train.Epochs, cfg.Train.LR, cfg.Folds = obj, r.Lambda, r.Epochs, r.LR, r.Folds
	cfg.Epochs = sel
	return cfg, h, err
}

// mseScaleCheck refuses columns whose scale float64 cannot square: the
// MSE, the variances that standardise every column and the training loss
// all square differences, so values near 1e160 overflow to +Inf (once
// reported as "training diverged") and values near 1e-300 underflow to 0
// (a realised MSE of exactly 0 between different columns). The error
// names the column and what to do.
func mseScaleCheck(t *dataio.Table, file string, tc, pc int, fc []int, y, pred []float64, x *mat.Dense) error {
	bad := func(j int, msg string) error {
		return &fault.InputError{File: file, Field: "column " + t.Name(j), Msg: msg + "; rescale the column (e.g. to other units)"}
	}
	spread := func(v []float64) (mean, ss float64) {
		for _, a := range v {
			mean += a / float64(len(v))
		}
		for _, a := range v {
			ss += (a - mean) * (a - mean)
		}
		return mean, ss
	}
	col := make([]float64, len(y))
	for k, j := range fc {
		mat.Col(col, k, x)
		if _, ss := spread(col); math.IsInf(ss, 0) || math.IsNaN(ss) {
			return bad(j, "its variance overflows float64 (values too large to square)")
		}
	}
	if _, ss := spread(y); math.IsInf(ss, 0) || math.IsNaN(ss) {
		return bad(tc, "its variance overflows float64 (values too large to square)")
	}
	var sq float64
	differ := false
	for i := range y {
		d := y[i] - pred[i]
		sq += d * d
		differ = differ || d != 0
	}
	switch {
	case math.IsInf(sq, 0) || math.IsNaN(sq):
		return bad(pc, fmt.Sprintf("squared errors against the target %s overflow float64", t.Name(tc)))
	case sq == 0 && differ:
		return bad(pc, fmt.Sprintf("squared errors against the target %s underflow to 0 (values too small to square)", t.Name(tc)))
	}
	return nil
}

// maxModelBytes bounds a check-model file: its reference errors take
// about 20 bytes a row, so 1 GiB is 50 million reference rows.
const maxModelBytes = 1 << 30

// readModelFile reads a check-model file, refusing what is not a regular
// file (a FIFO would block, /dev/zero never ends) or is larger than
// maxModelBytes, before reading it.
func readModelFile(fsys fs.FS, name string) ([]byte, error) {
	st, err := fs.Stat(fsys, name)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, &fault.InputError{File: name, Msg: "is not a regular file (" + st.Mode().Type().String() + ")"}
	}
	if st.Size() > maxModelBytes {
		return nil, &fault.InputError{File: name, Msg: fmt.Sprintf("%d bytes; a check model file is at most %d", st.Size(), maxModelBytes)}
	}
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxModelBytes+1))
	if err == nil && len(b) > maxModelBytes {
		return nil, &fault.InputError{File: name, Msg: fmt.Sprintf("more than %d bytes; a check model file is at most that", maxModelBytes)}
	}
	return b, err
}

// maxMSEEpochs bounds --epochs: a million full passes is days of
// training, and a bound keeps a typo such as 9e18 from looking like a hang.
const maxMSEEpochs = 1_000_000

// mseCalibrationTolerance is how far (relative) the calibrated in-sample
// estimate may sit from the realised MSE before fit warns.
const mseCalibrationTolerance = 0.25

// mseHeader parses the header field.
func mseHeader(s string) (dataio.Header, error) {
	switch s {
	case "auto":
		return dataio.HeaderAuto, nil
	case "yes":
		return dataio.HeaderPresent, nil
	case "no":
		return dataio.HeaderAbsent, nil
	}
	return 0, fault.Fieldf("header", "{header} %q: want auto, yes or no", s)
}

// FitResult is the result of `genlens mse fit`; it marshals to the
// command's --json document.
type FitResult struct {
	Model                 string      `json:"model"`
	Rows                  int         `json:"rows"`
	Features              []string    `json:"features"`
	Target                string      `json:"target"`
	Prediction            string      `json:"prediction"`
	Objective             string      `json:"objective"`
	FinalLoss             jsonnum.Num `json:"final_loss"`
	ReferenceRealizedMSE  jsonnum.Num `json:"reference_realized_mse"`
	ReferenceEstimatedMSE jsonnum.Num `json:"reference_estimated_mse"`
	// ReferenceRawEstimatedMSE is the in-sample estimate before
	// calibration, and CalibrationFactor the multiplier learnt on
	// held-out folds (1 when --folds is 0).
	ReferenceRawEstimatedMSE jsonnum.Num `json:"reference_raw_estimated_mse"`
	CalibrationFactor        jsonnum.Num `json:"calibration_factor"`
	// Epochs is the number of epochs the check network was trained,
	// chosen by validation when EpochSelection is "validation" (fewer
	// than ten reference rows train the fixed count).
	Epochs         int    `json:"epochs"`
	EpochSelection string `json:"epoch_selection"`

	// Check is the trained check model, its columns named.
	Check *checkmodel.Model `json:"-"`
}

// WriteModel writes the model file: the check model as indented JSON.
func (r *FitResult) WriteModel(w io.Writer) error { return dataio.EncodeJSON(w, r.Check) }

// Fit runs `genlens mse fit`: it reads the training table through
// env.FS, trains the check model and names its columns. A fit that
// diverged is an error (nothing is to be saved); one whose in-sample
// estimate is far from the realised MSE is returned with a warning
// through env.Warn.
func Fit(ctx context.Context, env job.Env, req FitRequest) (*FitResult, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	cfg, hm, err := req.options()
	if err != nil {
		return nil, err
	}
	t, err := dataio.ReadTableSepFS(env.InputFS(), req.Train, hm, req.Separator())
	if errors.Is(err, dataio.ErrAmbiguousHeader) {
		return nil, fields.Errorf("%w ({header} yes or {header} no)", err)
	}
	if err != nil {
		return nil, err
	}
	tc, pc, fc, err := mseFitColumns(t, req)
	if err != nil {
		return nil, err
	}
	y, err := t.Floats(tc, false)
	if err != nil {
		return nil, err
	}
	pred, err := t.Floats(pc, false)
	if err != nil {
		return nil, err
	}
	x, err := t.Matrix(fc)
	if err != nil {
		return nil, err
	}
	if len(y) < 2 {
		return nil, &fault.InputError{File: req.Train, Msg: fmt.Sprintf("%d data row; a check model needs at least 2", len(y))}
	}
	if err := mseScaleCheck(t, req.Train, tc, pc, fc, y, pred, x); err != nil {
		return nil, err
	}
	m, err := checkmodel.Fit(ctx, x, y, pred, cfg, req.Seed)
	if err != nil {
		return nil, err
	}
	ref := m.Reference
	if ref.Diverged() {
		return nil, fields.Errorf("mse fit: training diverged: in-sample estimated MSE %s (before calibration) against the realised %s; lower {lr} (now %v) or change {epochs}; nothing saved",
			mseFmt(ref.RawEstimatedMSE), mseFmt(ref.RealizedMSE), req.LR)
	}
	if req.Folds > 0 && m.Calibration.Folds == 0 {
		env.Warning(fmt.Sprintf("%d rows are too few to calibrate the estimates on held-out folds: they are the raw Eq. 11 upper bound, typically 1.5 times the MSE", len(y)))
	}
	if ref.Doubtful() {
		env.Warning(fmt.Sprintf("in-sample estimated MSE %s (before calibration) is far from the realised %s: the check model may be under-trained ({epochs}) or unstable ({lr})",
			mseFmt(ref.RawEstimatedMSE), mseFmt(ref.RealizedMSE)))
	} else if r := ref.EstimatedMSE / ref.RealizedMSE; ref.RealizedMSE > 0 && math.Abs(r-1) > mseCalibrationTolerance {
		how := "calibrated on held-out folds"
		if cfg.Folds == 0 {
			how = "uncalibrated ({folds} 0)"
		}
		env.Warning(fmt.Sprintf("in-sample estimated MSE %s is %.0f%% off the realised %s (%s): production estimates may be off by as much",
			mseFmt(ref.EstimatedMSE), 100*(r-1), mseFmt(ref.RealizedMSE), how))
	}
	m.Columns = checkmodel.Columns{Prediction: t.Name(pc), Target: t.Name(tc), Header: t.Header != nil, Count: t.Cols()}
	for _, j := range fc {
		m.Columns.Features = append(m.Columns.Features, t.Name(j))
	}
	if m.Drift, err = monitor.FitDrift(x, m.Columns.Features); err != nil {
		return nil, err
	}
	return &FitResult{
		Model: req.Model, Rows: len(y), Features: m.Columns.Features, Target: m.Columns.Target,
		Prediction: m.Columns.Prediction, Objective: string(cfg.Objective), FinalLoss: jsonnum.Num(m.Training.FinalLoss),
		ReferenceRealizedMSE: jsonnum.Num(ref.RealizedMSE), ReferenceEstimatedMSE: jsonnum.Num(ref.EstimatedMSE),
		ReferenceRawEstimatedMSE: jsonnum.Num(ref.RawEstimatedMSE), CalibrationFactor: jsonnum.Num(m.Calibration.FactorOrOne()),
		Epochs: m.Training.Epochs, EpochSelection: string(m.Training.EpochSelection), Check: m,
	}, nil
}

// mseFitColumns resolves the target, prediction and feature columns of
// a fit; the features default to every other column.
func mseFitColumns(t *dataio.Table, req FitRequest) (tc, pc int, fc []int, err error) {
	if tc, err = mseColumn(t, req.Target, "target"); err != nil {
		return
	}
	if pc, err = mseColumn(t, req.Prediction, "prediction"); err != nil {
		return
	}
	if tc == pc {
		return tc, pc, nil, fault.Fieldf("target", "mse fit: {target} and {prediction} name the same column %q", t.Name(tc))
	}
	if len(req.Features) == 0 {
		for j := range t.Cols() {
			if j != tc && j != pc {
				fc = append(fc, j)
			}
		}
		if len(fc) == 0 {
			return tc, pc, nil, &fault.InputError{File: req.Train, Msg: "no feature columns besides the target and the prediction"}
		}
		return tc, pc, fc, nil
	}
	for _, s := range req.Features {
		j, err := mseColumn(t, s, "features")
		if err != nil {
			return tc, pc, nil, err
		}
		if j == tc || j == pc {
			return tc, pc, nil, fault.Fieldf("features", "mse fit: {features} includes the target or prediction column %q", t.Name(j))
		}
		if slices.Contains(fc, j) {
			return tc, pc, nil, fault.Fieldf("features", "mse fit: {features} names column %q twice", t.Name(j))
		}
		fc = append(fc, j)
	}
	return tc, pc, fc, nil
}

// mseColumn resolves a column of t given by header name or 0-based index;
// an error names the request field that gave it, in braces (the error is
// about the file, not the field).
func mseColumn(t *dataio.Table, spec, field string) (int, error) {
	j, err := t.Column(spec)
	if ie := (*fault.InputError)(nil); errors.As(err, &ie) {
		ie.Field = "{" + field + "}"
	}
	return j, err
}

// mseFmt formats a number as the command line's tables do: 6 significant
// digits, "-" for NaN.
func mseFmt(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return strconv.FormatFloat(v+0, 'g', 6, 64)
}

// EstimateRequest is a request of `genlens mse estimate`: apply a
// check model to operational data, chunk by chunk. At most one chunking
// is given: ChunkSize rows, Chunks of equal size, or a calendar Period
// of the Timestamp column; none means 10 chunks (one per row for fewer
// than 10 rows).
type EstimateRequest struct {
	Model     string `json:"model" help:"check model file from 'genlens mse fit'"`
	Data      string `json:"data" help:"operational data (CSV)"`
	ChunkSize int    `json:"chunk_size,omitempty" help:"rows per chunk"`
	Chunks    int    `json:"chunks,omitempty" help:"number of chunks (default 10 when no chunking is given)"`
	Timestamp string `json:"timestamp,omitempty" help:"timestamp column, for {period} chunks"`
	Period    string `json:"period,omitempty" help:"calendar period of a chunk: hour, day, week, month, quarter or year"` // hour, day, week, month, quarter or year
	// Target, when some labels have arrived, adds the realised MSE over
	// the rows whose target cell is not empty.
	Target string `json:"target,omitempty" help:"target column, when some labels have arrived: adds the realised MSE"`
	// MaxOutOfReference is the fraction of a chunk's rows with a feature
	// outside the reference range above which the chunk's estimate is
	// marked as an extrapolation.
	MaxOutOfReference float64 `json:"max_out_of_reference" help:"fraction of a chunk's rows outside the reference ranges above which its estimate is marked extrapolating (raised where the reference is too small for it; the limit used is reported as out_of_reference_limit)"`

	job.CSVOptions // sep: how the fields of CSV inputs are separated
}

// NewEstimateRequest returns a request with the command line's
// defaults (10 chunks, chunks extrapolating beyond 5% of rows outside
// the reference ranges) and no inputs.
func NewEstimateRequest() EstimateRequest {
	return EstimateRequest{MaxOutOfReference: monitor.DefaultMaxOutOfReference}
}

// Validate checks the fields that need no input file.
func (r *EstimateRequest) Validate() (verr error) {
	defer func() { verr = job.WithDefault(verr, r, NewEstimateRequest()) }()
	if err := job.CheckLimits("mse estimate", job.Lim("chunk_size", r.ChunkSize, maxChunkRows), job.Lim("chunks", r.Chunks, maxChunks)); err != nil {
		return err
	}
	if err := r.CSVOptions.ValidateSep(); err != nil {
		return err
	}
	_, err := r.period()
	return err
}

func (r *EstimateRequest) period() (monitor.Period, error) {
	modes := 0
	for _, set := range []bool{r.ChunkSize != 0, r.Chunks != 0, r.Timestamp != "" || r.Period != ""} {
		if set {
			modes++
		}
	}
	switch {
	case r.Model == "" || r.Data == "":
		return "", fault.Fieldf("model", "mse estimate: {model} and {data} are required")
	case modes > 1:
		return "", fault.Fieldf("chunk_size", "mse estimate: give one of {chunk_size}, {chunks}, or {timestamp} with {period}")
	case (r.Timestamp == "") != (r.Period == ""):
		return "", fault.Fieldf("timestamp", "mse estimate: {timestamp} and {period} go together")
	case r.ChunkSize < 0:
		return "", fault.Fieldf("chunk_size", "mse estimate: {chunk_size} and {chunks} must be positive")
	case r.Chunks < 0:
		return "", fault.Fieldf("chunks", "mse estimate: {chunk_size} and {chunks} must be positive")
	case !(r.MaxOutOfReference > 0 && r.MaxOutOfReference <= 1):
		return "", fault.Fieldf("max_out_of_reference", "mse estimate: {max_out_of_reference} %v must be in (0, 1]", r.MaxOutOfReference)
	case r.Period == "":
		return "", nil
	}
	p, err := monitor.ParsePeriod(r.Period)
	if err != nil {
		return "", fault.Fieldf("period", "%s", err)
	}
	return p, nil
}

// EstimateResult is the result of `genlens mse estimate`; it marshals
// to the command's --json document.
type EstimateResult struct {
	Model    string `json:"model"`
	Data     string `json:"data"`
	Rows     int    `json:"rows"`
	Chunking string `json:"chunking"`
	// EstimatedMSE is the estimate over all rows, labelled or not.
	EstimatedMSE jsonnum.Num  `json:"estimated_mse"`
	RealizedMSE  *jsonnum.Num `json:"realized_mse,omitempty"` // with a target: over the labelled rows
	Labelled     *int         `json:"labelled,omitempty"`     // with a target
	// EstimatedLabelledMSE is the estimate over the labelled rows only,
	// the rows RealizedMSE is over, so the two compare (EstimatedMSE
	// also holds the unlabelled rows, often the newest and the most
	// drifted); with a target, NaN while no row is labelled.
	EstimatedLabelledMSE *jsonnum.Num `json:"estimated_mse_labelled,omitempty"`
	LowerThreshold       jsonnum.Num  `json:"lower_threshold"`
	UpperThreshold       jsonnum.Num  `json:"upper_threshold"`
	ReferenceRows        int          `json:"reference_chunk_rows"`
	ReferenceCount       int          `json:"reference_chunks"`
	Alerts               int          `json:"alerts"`
	// Extrapolating and DriftAlerts count the chunks so marked; nil for a
	// model file without a drift model.
	Extrapolating *int `json:"extrapolating_chunks,omitempty"`
	DriftAlerts   *int `json:"drift_alerts,omitempty"`
	// Chunks are the chunks as the service's monitors show theirs.
	Chunks []monitor.ChunkView `json:"chunks"`

	// Check is the check model applied.
	Check *checkmodel.Model `json:"-"`
	// Monitor holds the chunks as package monitor evaluated them, and
	// Thresholds the thresholds from the reference data.
	Monitor    []monitor.Result   `json:"-"`
	Thresholds monitor.Thresholds `json:"-"`
	// Report is the monitoring pipeline's outcome (drift thresholds
	// included).
	Report *monitor.Report `json:"-"`
}

// IntervalNote is the warning for a model file without held-out
// estimates of its reference rows.
func IntervalNote(model string) string {
	return fmt.Sprintf("%s records no held-out estimates of its reference rows (written before genlens recorded them, or fitted without folds): estimate_lower and estimate_upper are the sampling band, which does not hold the check model's own error; fit the model again with mse fit for a calibrated interval", model)
}

// rowsOf returns the rows of x as slices.
func rowsOf(x *mat.Dense) [][]float64 {
	n, _ := x.Dims()
	out := make([][]float64, n)
	for i := range out {
		out[i] = x.RawRowView(i)
	}
	return out
}

// Estimate runs `genlens mse estimate`: it reads the model file and
// the operational data through env.FS, matches the data's columns to the
// model's (checkmodel.Model.Inputs), cuts the rows into chunks and
// evaluates every chunk against thresholds drawn from the reference
// errors stored in the model, in chunks of the same size
// (monitor.MatchedThresholds).
func Estimate(ctx context.Context, env job.Env, req EstimateRequest) (*EstimateResult, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	period, err := req.period()
	if err != nil {
		return nil, err
	}
	fsys := env.InputFS()
	b, err := readModelFile(fsys, req.Model)
	if err != nil {
		if ie := (*fault.InputError)(nil); errors.As(err, &ie) {
			return nil, err
		}
		msg := err.Error()
		if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
			msg = pe.Err.Error() // the path is the error's File already
		}
		return nil, &fault.InputError{File: req.Model, Msg: "cannot read the check model: " + msg, Err: err}
	}
	m, err := checkmodel.DecodeModel(req.Model, b)
	if err != nil {
		return nil, err
	}
	// A first row that is clearly a header or clearly data decides; an
	// ambiguous one is read the way the model's training file was.
	hm := dataio.HeaderAbsent
	if m.Columns.Header {
		hm = dataio.HeaderPresent
	}
	t, err := dataio.ReadTableAutoSepFS(fsys, req.Data, hm, req.Separator())
	if err != nil {
		return nil, err
	}
	x, pred, err := m.Inputs(t, req.Model)
	if err != nil {
		return nil, err
	}
	var realized []float64
	if req.Target != "" {
		j, err := mseColumn(t, req.Target, "target")
		if err != nil {
			return nil, err
		}
		y, err := t.Floats(j, true)
		if err != nil {
			return nil, err
		}
		realized = make([]float64, len(y))
		for i := range y {
			realized[i] = (y[i] - pred[i]) * (y[i] - pred[i]) // NaN stays NaN
		}
	}
	n := len(pred)
	var chunks []monitor.Chunk
	var chunking string
	switch {
	case req.ChunkSize > 0:
		chunks, err = monitor.BySize(n, req.ChunkSize)
		chunking = fmt.Sprintf("%d rows per chunk", req.ChunkSize)
	case period != "":
		j, err := mseColumn(t, req.Timestamp, "timestamp")
		if err != nil {
			return nil, err
		}
		times, err := t.Times(j)
		if err != nil {
			return nil, err
		}
		chunks, err = monitor.ByPeriod(times, period)
		if re := (*monitor.RowError)(nil); errors.As(err, &re) {
			return nil, &fault.InputError{File: req.Data, Line: t.Line(re.Row), Field: t.Field(j), Msg: re.Msg}
		}
		if err != nil {
			return nil, err
		}
		chunking = fmt.Sprintf("one chunk per %s of %s", period, t.Name(j))
	default:
		k := req.Chunks
		if k == 0 {
			k = min(10, n)
		}
		chunks, err = monitor.ByCount(n, k)
		if err != nil {
			return nil, &fault.InputError{File: req.Data, Msg: fmt.Sprintf("{chunks} %d: %d data rows would leave chunks empty", k, n)}
		}
		chunking = fmt.Sprintf("%d chunks", k)
	}
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rowEst, err := m.RowEstimates(x, pred)
	if err != nil {
		return nil, err
	}
	in := monitor.Input{Chunks: chunks, Estimates: rowEst, Realized: realized,
		Reference: m.Reference.SquaredErrors, HeldOut: m.Reference.HeldOutEstimates, NonNegative: true, MaxOutOfReference: req.MaxOutOfReference}
	if m.Drift != nil {
		in.Drift, in.Features = m.Drift, rowsOf(x)
	} else {
		env.Warning(monitor.NoDriftNote(req.Model))
	}
	if m.Reference.HeldOutEstimates == nil {
		env.Warning(IntervalNote(req.Model))
	}
	rep, err := monitor.Run(in)
	if err != nil {
		return nil, err
	}
	res, th, refRows := rep.Results, rep.Thresholds, rep.ReferenceRows
	var sum float64
	for _, v := range rowEst {
		sum += v
	}
	out := &EstimateResult{
		Model: req.Model, Data: req.Data, Rows: n, Chunking: chunking, EstimatedMSE: jsonnum.Num(sum / float64(n)),
		LowerThreshold: jsonnum.Num(th.Lower), UpperThreshold: jsonnum.Num(th.Upper), ReferenceRows: refRows, ReferenceCount: th.Chunks,
		Check: m, Monitor: res, Thresholds: th, Report: rep,
	}
	if m.Drift != nil {
		var ex, da int
		for _, r := range res {
			if r.Drift.Extrapolating {
				ex++
			}
			if r.Drift.DriftAlert {
				da++
			}
		}
		out.Extrapolating, out.DriftAlerts = &ex, &da
	}
	if realized != nil {
		var s, e float64
		var k int
		for i, v := range realized {
			if !math.IsNaN(v) {
				s += v
				e += rowEst[i]
				k++
			}
		}
		r, el := jsonnum.Num(math.NaN()), jsonnum.Num(math.NaN())
		if k > 0 {
			r, el = jsonnum.Num(s/float64(k)), jsonnum.Num(e/float64(k))
		}
		out.RealizedMSE, out.Labelled, out.EstimatedLabelledMSE = &r, &k, &el
	}
	for _, r := range res {
		c := monitor.NewChunkView(&r, m.Drift, rep.DriftThresholds)
		if realized != nil {
			l := r.Labelled
			c.Labelled = &l
		}
		if r.Alert {
			out.Alerts++
		}
		out.Chunks = append(out.Chunks, c)
	}
	return out, nil
}
