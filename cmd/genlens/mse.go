package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"gonum.org/v1/gonum/mat"

	"genlens/chart"
	"genlens/checkmodel"
	"genlens/dataio"
	"genlens/evalstat"
	"genlens/internal/atomicfile"
	"genlens/monitor"
	"genlens/nn"
	"genlens/report"
)

func init() { extraCommands = append(extraCommands, newMSECmd) }

func newMSECmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mse",
		Short: "Estimate a regression model's MSE in production before the labels arrive (seed 004)",
		Long: `mse estimates the mean squared error of a deployed regression model f on
unlabelled operational data with a check model h (seed 004: "A one-step MSE
estimation of models in production"): h is trained on labelled reference data
together with f's predictions there, by the one-step objective K* (or K, or L),
and the MSE of f on new inputs is estimated as mean 2 (h(x) - f(x))².

  fit        train a check model on labelled reference data and save it
  estimate   estimate the MSE of operational data, chunk by chunk, with
             bands, thresholds from the reference data and alerts
  bench      compare the one-step objectives with the two-step baselines
             on the seed's synthetic and LIBSVM protocols

Tables are CSV files (a header row is detected; columns are named by header
name, or by 0-based index in a file without a header).`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newMSEFitCmd(), newMSEEstimateCmd(), newMSEBenchCmd())
	return cmd
}

// ---------------------------------------------------------------- tables

// mseErrMsg drops the path from an *fs.PathError, which the caller's
// message names already.
func mseErrMsg(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// mseHeaderMode parses --header.
func mseHeaderMode(s string) (dataio.Header, error) {
	switch s {
	case "auto":
		return dataio.HeaderAuto, nil
	case "yes":
		return dataio.HeaderPresent, nil
	case "no":
		return dataio.HeaderAbsent, nil
	}
	return 0, badUsage("--header %q: want auto, yes or no", s)
}

// mseColumn resolves a column of t given by header name or 0-based index
// and names the flag that gave it in the error.
func mseColumn(t *dataio.Table, spec, flag string) (int, error) {
	j, err := t.Column(spec)
	if ie := (*dataio.InputError)(nil); errors.As(err, &ie) {
		ie.Field = flag
	}
	return j, err
}

// ---------------------------------------------------------------- fit

type mseFitFlags struct {
	train, target, prediction, model string
	header                           string
	features                         []string
	objective                        string
	lambda, lr                       float64
	epochs                           int
	seed                             uint64
	json                             bool
}

func newMSEFitCmd() *cobra.Command {
	var f mseFitFlags
	cmd := &cobra.Command{
		Use:   "fit --train TRAIN.csv --target COL --prediction COL --model CHECK.json [flags]",
		Short: "Train a check model on labelled reference data and save it as JSON",
		Long: `fit trains the check model h of seed 004 on TRAIN.csv: labelled rows with the
target (--target) and the deployed model's prediction f(x) (--prediction).
Use data the model was not trained on (its validation set, or a labelled
reference period), so that the realised errors stored for the alert
thresholds are representative; the estimate itself stays right even when f
overfits (seed 004, Remark 3).

Features default to every other column. Targets and predictions are
standardised with the training mean and standard deviation, features per
column; the model file records the scaling and the column names, and
'genlens mse estimate' refuses data whose columns do not match.

Objectives: kstar (default, Eq. 8), k (the looser bound mean e²) or l
(K* + lambda R, Eq. 17-18). Network: 3 linear layers with 64 hidden ReLU
units, full-batch Adam (weight decay 1e-3), as in the seed.`,
		Example: `  genlens mse fit --train reference.csv --target price --prediction price_pred --model check.json
  genlens mse fit --train ref.csv --target 0 --prediction 1 --features 2,3,4 --objective l --model check.json`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return runMSEFit(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.train, "train", "", "labelled reference data (CSV)")
	fl.StringVar(&f.target, "target", "", "target column (name, or 0-based index without a header)")
	fl.StringVar(&f.prediction, "prediction", "", "column holding the deployed model's prediction f(x)")
	fl.StringSliceVar(&f.features, "features", nil, "feature columns (default: all other columns)")
	fl.StringVar(&f.header, "header", "auto", "does the first row hold column names: auto, yes or no (estimate reads its data the same way)")
	fl.StringVar(&f.objective, "objective", "kstar", "training objective: kstar, k or l")
	fl.Float64Var(&f.lambda, "lambda", 100, "weight of the regulariser R in objective l")
	fl.IntVar(&f.epochs, "epochs", 200, "training epochs (full batch)")
	fl.Float64Var(&f.lr, "lr", 0.01, "Adam learning rate")
	fl.Uint64Var(&f.seed, "seed", 1, "random seed (weights); the same seed gives the same model")
	fl.StringVar(&f.model, "model", "", "where to write the check model (JSON)")
	fl.BoolVar(&f.json, "json", false, "print one JSON document")
	return cmd
}

// mseFitOutput is the JSON of `genlens mse fit`.
type mseFitOutput struct {
	Model                 string   `json:"model"`
	Rows                  int      `json:"rows"`
	Features              []string `json:"features"`
	Target                string   `json:"target"`
	Prediction            string   `json:"prediction"`
	Objective             string   `json:"objective"`
	FinalLoss             num      `json:"final_loss"`
	ReferenceRealizedMSE  num      `json:"reference_realized_mse"`
	ReferenceEstimatedMSE num      `json:"reference_estimated_mse"`
}

func runMSEFit(cmd *cobra.Command, f mseFitFlags) error {
	for _, req := range []struct{ name, val string }{{"--train", f.train}, {"--target", f.target}, {"--prediction", f.prediction}, {"--model", f.model}} {
		if req.val == "" {
			return badUsage("mse fit: %s is required", req.name)
		}
	}
	obj, err := checkmodel.ParseObjective(f.objective)
	if err != nil {
		return usageError{err}
	}
	if f.epochs < 1 {
		return badUsage("mse fit: --epochs %d must be at least 1", f.epochs)
	}
	if !(f.lr > 0) || math.IsInf(f.lr, 0) {
		return badUsage("mse fit: --lr %v must be positive", f.lr)
	}
	if !(f.lambda >= 0) || math.IsInf(f.lambda, 0) {
		return badUsage("mse fit: --lambda %v must be non-negative", f.lambda)
	}
	if sameFileAs(f.model, f.train) != "" {
		return badUsage("mse fit: --model %s is the training file; refusing to overwrite it", f.model)
	}
	if err := mseRefuseForeign(f.model); err != nil {
		return err
	}
	hm, err := mseHeaderMode(f.header)
	if err != nil {
		return err
	}
	t, err := dataio.ReadTable(f.train, hm)
	if errors.Is(err, dataio.ErrAmbiguousHeader) {
		return fmt.Errorf("%w (--header yes or --header no)", err)
	}
	if err != nil {
		return err
	}
	tc, err := mseColumn(t, f.target, "--target")
	if err != nil {
		return err
	}
	pc, err := mseColumn(t, f.prediction, "--prediction")
	if err != nil {
		return err
	}
	if tc == pc {
		return badUsage("mse fit: --target and --prediction name the same column %q", t.Name(tc))
	}
	var fc []int
	if len(f.features) == 0 {
		for j := range t.Cols() {
			if j != tc && j != pc {
				fc = append(fc, j)
			}
		}
		if len(fc) == 0 {
			return &dataio.InputError{File: f.train, Msg: "no feature columns besides the target and the prediction"}
		}
	} else {
		for _, s := range f.features {
			j, err := mseColumn(t, s, "--features")
			if err != nil {
				return err
			}
			if j == tc || j == pc {
				return badUsage("mse fit: --features includes the target or prediction column %q", t.Name(j))
			}
			if slices.Contains(fc, j) {
				return badUsage("mse fit: --features names column %q twice", t.Name(j))
			}
			fc = append(fc, j)
		}
	}
	y, err := t.Floats(tc, false)
	if err != nil {
		return err
	}
	pred, err := t.Floats(pc, false)
	if err != nil {
		return err
	}
	x, err := t.Matrix(fc)
	if err != nil {
		return err
	}
	if len(y) < 2 {
		return &dataio.InputError{File: f.train, Msg: fmt.Sprintf("%d data row; a check model needs at least 2", len(y))}
	}
	cfg := checkmodel.DefaultConfig()
	cfg.Objective = obj
	cfg.Lambda = f.lambda
	cfg.Train.Epochs = f.epochs
	cfg.Train.LR = f.lr
	m, err := checkmodel.Fit(x, y, pred, cfg, f.seed)
	if err != nil {
		return err
	}
	// A diverged fit (too high --lr) must not be saved as if it worked;
	// its in-sample estimate of f's MSE gives it away.
	est, real := m.Reference.EstimatedMSE, m.Reference.RealizedMSE
	if math.IsNaN(est) || math.IsInf(est, 0) || est > 100*real && real > 0 {
		return fmt.Errorf("mse fit: training diverged: in-sample estimated MSE %s against the realised %s; lower --lr (now %v) or change --epochs; nothing saved", fmtNum(est), fmtNum(real), f.lr)
	}
	if real > 0 && (est > 10*real || est < real/10) {
		fmt.Fprintf(cmd.ErrOrStderr(), "genlens: warning: in-sample estimated MSE %s is far from the realised %s: the check model may be under-trained (--epochs) or unstable (--lr)\n", fmtNum(est), fmtNum(real))
	}
	m.Columns = checkmodel.Columns{Prediction: t.Name(pc), Target: t.Name(tc), Header: t.Header != nil, Count: t.Cols()}
	for _, j := range fc {
		m.Columns.Features = append(m.Columns.Features, t.Name(j))
	}
	if err := dataio.WriteJSON(f.model, m); err != nil {
		return fmt.Errorf("--model: %w", err)
	}
	out := mseFitOutput{
		Model: f.model, Rows: len(y), Features: m.Columns.Features, Target: m.Columns.Target,
		Prediction: m.Columns.Prediction, Objective: string(obj), FinalLoss: num(m.Training.FinalLoss),
		ReferenceRealizedMSE: num(m.Reference.RealizedMSE), ReferenceEstimatedMSE: num(m.Reference.EstimatedMSE),
	}
	if f.json {
		return writeJSON(cmd.OutOrStdout(), out)
	}
	w := cmd.OutOrStdout()
	fmt.Fprintf(w, "check model (%s) trained on %d rows of %s, %d features: %s\n", obj, out.Rows, f.train, len(out.Features), strings.Join(out.Features, ", "))
	fmt.Fprintf(w, "reference MSE of %s: realised %s, estimated %s (in-sample)\n", out.Prediction, fmtNum(m.Reference.RealizedMSE), fmtNum(m.Reference.EstimatedMSE))
	fmt.Fprintf(w, "saved to %s\n", f.model)
	return nil
}

// mseRefuseForeign refuses to overwrite an existing file that is not a
// genlens check model (a mistyped --model pointing at data, say).
func mseRefuseForeign(path string) error {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return badUsage("mse fit: --model %s: %v", path, mseErrMsg(err))
	}
	var probe struct {
		Format string `json:"format"`
	}
	if json.Unmarshal(b, &probe) != nil || probe.Format != checkmodel.FormatVersion {
		return badUsage("mse fit: --model %s exists and is not a genlens check model; refusing to overwrite it", path)
	}
	return nil
}

// ---------------------------------------------------------------- estimate

type mseEstimateFlags struct {
	model, data, target, timestamp, period, out string
	chunkSize, chunks                           int
	json                                        bool
}

func newMSEEstimateCmd() *cobra.Command {
	var f mseEstimateFlags
	cmd := &cobra.Command{
		Use:   "estimate --model CHECK.json --data OP.csv [--chunk-size N | --chunks K | --timestamp COL --period day] [flags]",
		Short: "Estimate the MSE of operational data chunk by chunk, with bands, thresholds and alerts",
		Long: `estimate applies a check model from 'genlens mse fit' to operational data
OP.csv, which must have the model's feature and prediction columns (by header
name, or the same column count for a header-less file). Per chunk it reports
the estimated MSE, a band of ±3 sampling errors, and an alert when the estimate
leaves the thresholds: mean ± 3 standard deviations of the realised MSE over
chunks of the reference data stored in the model (chunks of the same size as
the operational ones; the lower threshold is clipped at 0).

Chunks: --chunk-size N rows (the last may be smaller), --chunks K of equal
size (default 10), or --timestamp COL --period hour|day|week|month|quarter|year
(rows in time order; timestamps RFC 3339, 2006-01-02[ 15:04:05] or Unix seconds).

With --target, the realised MSE of every chunk sits beside the estimate, over
the rows whose label has arrived: leave the cell empty for a label that has
not (a cell reading NaN is an error).`,
		Example: `  genlens mse estimate --model check.json --data today.csv --chunk-size 500
  genlens mse estimate --model check.json --data stream.csv --timestamp ts --period day --target price --out mse/`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return runMSEEstimate(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.model, "model", "", "check model file from 'genlens mse fit'")
	fl.StringVar(&f.data, "data", "", "operational data (CSV)")
	fl.IntVar(&f.chunkSize, "chunk-size", 0, "rows per chunk")
	fl.IntVar(&f.chunks, "chunks", 0, "number of chunks (default 10 when no chunking is given)")
	fl.StringVar(&f.timestamp, "timestamp", "", "timestamp column, for --period chunks")
	fl.StringVar(&f.period, "period", "", "calendar period of a chunk: hour, day, week, month, quarter or year")
	fl.StringVar(&f.target, "target", "", "target column, when some labels have arrived: adds the realised MSE")
	fl.StringVar(&f.out, "out", "", "directory for chunks.csv, estimate.json and mse_chunks.png")
	fl.BoolVar(&f.json, "json", false, "print one JSON document")
	return cmd
}

// mseChunk is one chunk in the JSON of `genlens mse estimate`.
type mseChunk struct {
	Index         int    `json:"index"`
	Start         int    `json:"start"`
	End           int    `json:"end"`
	Rows          int    `json:"rows"`
	Period        string `json:"period,omitempty"`
	From          string `json:"from,omitempty"`
	To            string `json:"to,omitempty"`
	EstimatedMSE  num    `json:"estimated_mse"`
	SamplingError num    `json:"sampling_error"`
	Lower         num    `json:"lower"`
	Upper         num    `json:"upper"`
	Alert         bool   `json:"alert"`
	RealizedMSE   num    `json:"realized_mse"`
	Labelled      *int   `json:"labelled,omitempty"`
}

// mseEstimateOutput is the JSON contract of `genlens mse estimate`.
type mseEstimateOutput struct {
	Model          string     `json:"model"`
	Data           string     `json:"data"`
	Rows           int        `json:"rows"`
	Chunking       string     `json:"chunking"`
	EstimatedMSE   num        `json:"estimated_mse"`
	RealizedMSE    *num       `json:"realized_mse,omitempty"`
	Labelled       *int       `json:"labelled,omitempty"`
	LowerThreshold num        `json:"lower_threshold"`
	UpperThreshold num        `json:"upper_threshold"`
	ReferenceRows  int        `json:"reference_chunk_rows"`
	ReferenceCount int        `json:"reference_chunks"`
	Alerts         int        `json:"alerts"`
	Chunks         []mseChunk `json:"chunks"`
}

func runMSEEstimate(cmd *cobra.Command, f mseEstimateFlags) error {
	if f.model == "" || f.data == "" {
		return badUsage("mse estimate: --model and --data are required")
	}
	if err := guardOut(f.out, mseEstimateOutputs, f.model, f.data); err != nil {
		return err
	}
	modes := 0
	for _, set := range []bool{f.chunkSize != 0, f.chunks != 0, f.timestamp != "" || f.period != ""} {
		if set {
			modes++
		}
	}
	if modes > 1 {
		return badUsage("mse estimate: give one of --chunk-size, --chunks, or --timestamp with --period")
	}
	if (f.timestamp == "") != (f.period == "") {
		return badUsage("mse estimate: --timestamp and --period go together")
	}
	if f.chunkSize < 0 || f.chunks < 0 {
		return badUsage("mse estimate: --chunk-size and --chunks must be positive")
	}
	var period monitor.Period
	if f.period != "" {
		p, err := monitor.ParsePeriod(f.period)
		if err != nil {
			return usageError{err}
		}
		period = p
	}
	m, err := readCheckModel(f.model)
	if err != nil {
		return err
	}
	// A first row that is clearly a header or clearly data decides;
	// an ambiguous one (a header-less log starting with a timestamp) is
	// read the way the model's training file was.
	t, err := dataio.ReadTable(f.data, dataio.HeaderAuto)
	if errors.Is(err, dataio.ErrAmbiguousHeader) {
		hm := dataio.HeaderAbsent
		if m.Columns.Header {
			hm = dataio.HeaderPresent
		}
		t, err = dataio.ReadTable(f.data, hm)
	}
	if err != nil {
		return err
	}
	x, pred, err := mseModelInputs(m, f.model, t)
	if err != nil {
		return err
	}
	var realized []float64
	if f.target != "" {
		j, err := mseColumn(t, f.target, "--target")
		if err != nil {
			return err
		}
		y, err := t.Floats(j, true)
		if err != nil {
			return err
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
	case f.chunkSize > 0:
		chunks, err = monitor.BySize(n, f.chunkSize)
		chunking = fmt.Sprintf("%d rows per chunk", f.chunkSize)
	case period != "":
		j, cerr := mseColumn(t, f.timestamp, "--timestamp")
		if cerr != nil {
			return cerr
		}
		times, terr := t.Times(j)
		if terr != nil {
			return terr
		}
		chunks, err = monitor.ByPeriod(times, period)
		var re *monitor.RowError
		if errors.As(err, &re) {
			return &dataio.InputError{File: f.data, Line: t.Line(re.Row), Field: t.Field(j), Msg: strings.TrimPrefix(re.Msg, "monitor: ")}
		}
		chunking = fmt.Sprintf("one chunk per %s of %s", period, t.Name(j))
	default:
		k := f.chunks
		if k == 0 {
			k = min(10, n)
		}
		chunks, err = monitor.ByCount(n, k)
		if err != nil {
			return &dataio.InputError{File: f.data, Msg: fmt.Sprintf("--chunks %d: %d data rows would leave chunks empty", k, n)}
		}
		chunking = fmt.Sprintf("%d chunks", k)
	}
	if err != nil {
		return usageError{err}
	}
	rowEst, err := m.RowEstimates(x, pred)
	if err != nil {
		return err
	}
	th, refRows := mseReferenceThresholds(m, chunks)
	res, err := monitor.Evaluate(chunks, rowEst, realized, monitor.Options{Thresholds: th, NonNegative: true})
	if err != nil {
		return err
	}
	out := mseEstimateOutput{
		Model: f.model, Data: f.data, Rows: n, Chunking: chunking,
		EstimatedMSE:   num(mseMean(rowEst)),
		LowerThreshold: num(th.Lower), UpperThreshold: num(th.Upper),
		ReferenceRows: refRows, ReferenceCount: th.Chunks,
	}
	if realized != nil {
		var s float64
		var k int
		for _, v := range realized {
			if !math.IsNaN(v) {
				s += v
				k++
			}
		}
		r := num(math.NaN())
		if k > 0 {
			r = num(s / float64(k))
		}
		out.RealizedMSE, out.Labelled = &r, &k
	}
	for _, r := range res {
		c := mseChunk{Index: r.Index, Start: r.Start, End: r.End, Rows: r.Rows(), Period: r.Period,
			EstimatedMSE: num(r.Estimate), SamplingError: num(r.SamplingError), Lower: num(r.Lower), Upper: num(r.Upper),
			Alert: r.Alert, RealizedMSE: num(r.Realized)}
		if !r.From.IsZero() {
			c.From, c.To = r.From.Format(time.RFC3339), r.To.Format(time.RFC3339)
		}
		if realized != nil {
			l := r.Labelled
			c.Labelled = &l
		}
		if r.Alert {
			out.Alerts++
		}
		out.Chunks = append(out.Chunks, c)
	}
	if f.out != "" {
		if err := writeMSEEstimateOut(f.out, &out, res, th); err != nil {
			return err
		}
	}
	if f.json {
		return writeJSON(cmd.OutOrStdout(), out)
	}
	printMSEEstimate(cmd.OutOrStdout(), &out, m)
	return nil
}

// mseMean is the arithmetic mean of a non-empty slice.
func mseMean(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// readCheckModel reads and validates a model file; every problem with it
// is bad input (exit 2).
func readCheckModel(path string) (*checkmodel.Model, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, &dataio.InputError{File: path, Msg: "cannot read the check model: " + mseErrMsg(err), Err: err}
	}
	var m checkmodel.Model
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, &dataio.InputError{File: path, Msg: "not a check model file: " + err.Error()}
	}
	if err := m.Validate(); err != nil {
		return nil, &dataio.InputError{File: path, Msg: strings.TrimPrefix(err.Error(), "checkmodel: ")}
	}
	if m.Columns.Prediction == "" {
		return nil, &dataio.InputError{File: path, Msg: "the check model names no prediction column"}
	}
	return &m, nil
}

// mseModelInputs finds the model's feature and prediction columns in t and
// parses them; data whose columns do not match the model are refused.
func mseModelInputs(m *checkmodel.Model, modelPath string, t *dataio.Table) (*mat.Dense, []float64, error) {
	c := m.Columns
	if c.Header != (t.Header != nil) {
		has := map[bool]string{true: "a header row", false: "no header row"}
		return nil, nil, &dataio.InputError{File: t.File, Msg: fmt.Sprintf("has %s, but the check model %s was fitted on a file with %s", has[t.Header != nil], modelPath, has[c.Header])}
	}
	if !c.Header && t.Cols() != c.Count {
		return nil, nil, &dataio.InputError{File: t.File, Msg: fmt.Sprintf("has %d columns, but the check model %s was fitted on a header-less file with %d columns (columns are matched by position)", t.Cols(), modelPath, c.Count)}
	}
	find := func(name, role string) (int, error) {
		if c.Header {
			if j := slices.Index(t.Header, name); j >= 0 {
				return j, nil
			}
			return 0, &dataio.InputError{File: t.File, Msg: fmt.Sprintf("no column %q (the %s of check model %s); columns: %s", name, role, modelPath, strings.Join(t.Header, ", "))}
		}
		j, err := strconv.Atoi(name)
		if err != nil || j < 0 || j >= t.Cols() {
			return 0, &dataio.InputError{File: modelPath, Msg: fmt.Sprintf("bad column index %q", name)}
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

// mseReferenceThresholds cuts the reference squared errors stored in the
// model into consecutive chunks as large as the operational ones (the
// median operational chunk, for period chunks of varying size), drops an
// incomplete last chunk, and returns mean ± 3 std of their realised MSE.
func mseReferenceThresholds(m *checkmodel.Model, chunks []monitor.Chunk) (monitor.Thresholds, int) {
	sizes := make([]int, len(chunks))
	for i, c := range chunks {
		sizes[i] = c.Rows()
	}
	slices.Sort(sizes)
	size := sizes[len(sizes)/2]
	ref := m.Reference.SquaredErrors
	nRef := len(ref) / size * size
	if nRef == 0 {
		return monitor.ReferenceThresholds(nil, monitor.DefaultWidth, true), size
	}
	refChunks, _ := monitor.BySize(nRef, size)
	return monitor.ReferenceThresholds(monitor.ChunkMeans(ref, refChunks), monitor.DefaultWidth, true), size
}

func printMSEEstimate(w io.Writer, o *mseEstimateOutput, m *checkmodel.Model) {
	fmt.Fprintf(w, "%s: %d rows, %s; estimated MSE of %s: %s", o.Data, o.Rows, o.Chunking, m.Columns.Prediction, fmtNum(float64(o.EstimatedMSE)))
	if o.RealizedMSE != nil {
		fmt.Fprintf(w, ", realised %s over %d labelled rows", fmtNum(float64(*o.RealizedMSE)), *o.Labelled)
	}
	fmt.Fprintln(w)
	if math.IsNaN(float64(o.UpperThreshold)) {
		fmt.Fprintf(w, "thresholds: unavailable (the reference data holds %d chunk(s) of %d rows; 2 are needed)\n\n", o.ReferenceCount, o.ReferenceRows)
	} else {
		fmt.Fprintf(w, "thresholds: [%s, %s] from %d reference chunks of %d rows; %d alert(s)\n",
			fmtNum(float64(o.LowerThreshold)), fmtNum(float64(o.UpperThreshold)), o.ReferenceCount, o.ReferenceRows, o.Alerts)
		if o.ReferenceCount < 5 {
			fmt.Fprintln(w, "(a standard deviation from so few reference chunks is rough: use smaller chunks or more reference data)")
		}
		fmt.Fprintln(w)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "chunk\tperiod\trows\testimated MSE\tlower\tupper\trealised MSE\talert\t\n")
	for _, c := range o.Chunks {
		p := c.Period
		if p == "" {
			p = fmt.Sprintf("%d-%d", c.Start, c.End-1)
		}
		alert := ""
		if c.Alert {
			alert = "ALERT"
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t\n", c.Index, p, c.Rows, fmtNum(float64(c.EstimatedMSE)),
			fmtNum(float64(c.Lower)), fmtNum(float64(c.Upper)), fmtNum(float64(c.RealizedMSE)), alert)
	}
	tw.Flush()
}

// mseEstimateOutputs are the files 'mse estimate --out' writes.
var mseEstimateOutputs = []string{"chunks.csv", "estimate.json", "mse_chunks.png"}

func writeMSEEstimateOut(dir string, o *mseEstimateOutput, res []monitor.Result, th monitor.Thresholds) error {
	if err := prepareOut(dir); err != nil {
		return err
	}
	header := []string{"index", "start", "end", "rows", "period", "estimated_mse", "sampling_error", "lower", "upper", "realized_mse", "alert"}
	var rows [][]string
	cell := func(v float64) string {
		if math.IsNaN(v) {
			return ""
		}
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	for _, r := range res {
		rows = append(rows, []string{strconv.Itoa(r.Index), strconv.Itoa(r.Start), strconv.Itoa(r.End), strconv.Itoa(r.Rows()), r.Period,
			cell(r.Estimate), cell(r.SamplingError), cell(r.Lower), cell(r.Upper), cell(r.Realized), strconv.FormatBool(r.Alert)})
	}
	if err := dataio.WriteTable(outPath(dir, "chunks.csv"), header, rows); err != nil {
		return err
	}
	if err := dataio.WriteJSON(outPath(dir, "estimate.json"), o); err != nil {
		return err
	}
	return chartMSEChunks(outPath(dir, "mse_chunks.png"), "Estimated and realised MSE per chunk", "chunk", res, th)
}

// chartMSEChunks draws the monitoring chart: the estimate with its band,
// the realised MSE where labels exist, and the thresholds.
func chartMSEChunks(path, title, xlabel string, res []monitor.Result, th monitor.Thresholds) error {
	var est chart.Series
	est.Name = "estimated MSE (±3 SE)"
	var real chart.Series
	real.Name = "realised MSE"
	band := true
	for _, r := range res {
		x := float64(r.Index)
		est.X = append(est.X, x)
		est.Y = append(est.Y, r.Estimate)
		lo, hi := r.Lower, r.Upper
		if math.IsNaN(lo) || math.IsNaN(hi) {
			band = false
		}
		est.Lower = append(est.Lower, lo)
		est.Upper = append(est.Upper, hi)
		if !math.IsNaN(r.Realized) {
			real.X = append(real.X, x)
			real.Y = append(real.Y, r.Realized)
		}
	}
	if !band {
		est.Lower, est.Upper = nil, nil
	}
	series := []chart.Series{est}
	if len(real.X) > 0 {
		series = append(series, real)
	}
	if th.Available() {
		x0, x1 := est.X[0], est.X[len(est.X)-1]
		if x0 == x1 {
			x1 = x0 + 1
		}
		series = append(series,
			chart.Series{Name: "upper threshold", X: []float64{x0, x1}, Y: []float64{th.Upper, th.Upper}},
			chart.Series{Name: "lower threshold", X: []float64{x0, x1}, Y: []float64{th.Lower, th.Lower}})
	}
	return chart.Lines(path, title, xlabel, "MSE", series)
}

// ---------------------------------------------------------------- bench

type mseBenchFlags struct {
	dataset, out string
	trials       int
	methods      []string
	seed         uint64
	json         bool
}

func newMSEBenchCmd() *cobra.Command {
	var f mseBenchFlags
	cmd := &cobra.Command{
		Use:   "bench --dataset synthetic-a|synthetic-b|synthetic-c|PATH.csv [flags]",
		Short: "Compare the one-step check models with the two-step baselines (seed 004, Tables 1 and 3)",
		Long: `bench reproduces seed 004's experiments. Every trial draws data, trains the
prediction model f (3 linear layers, 64 hidden ReLU units, 200 epochs of
full-batch Adam, lr 0.01, weight decay 1e-3, targets standardised with training
statistics) and lets every method estimate f's MSE on the operational data;
the score is the mean over trials of |estimated MSE - empirical MSE|.

  synthetic-a|b|c  Section 4.1: y = (3x+5) sin(3x+5) + 0.3 (1 + max(0, 3x+5)) e,
                   x ~ N(0,1), e Gaussian (a), half-normal (b) or
                   Inv-Gamma(2, 0.5) (c); 100 training, 10000 operational rows
  PATH.csv         Section 4.2 (LIBSVM files): 1000 contiguous rows from a
                   random start, 500 to train, 500 operational; target in
                   column 0, features after (standardised with the training
                   window's statistics)

Methods: kstar, k, l (one-step, Eq. 8 and 17-18), naive (regress the squared
error), m2v, mvn, ens, rvn, rvnne, m2rvn (two-step baselines). "best" is the
lowest mean absolute error; "wilcoxon" gives each other method's two-sided
p-value against it (paired by trial; p >= 0.05: not significantly worse).
Trials run in parallel; the same --seed gives the same numbers.`,
		Example: `  genlens mse bench --dataset synthetic-a --trials 100 --out bench-a/
  genlens mse bench --dataset ../shared/data/regression/mg_scale.csv --methods kstar,l,m2v --json`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return runMSEBench(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.dataset, "dataset", "", "synthetic-a, synthetic-b, synthetic-c, or a CSV file (target in column 0)")
	fl.IntVar(&f.trials, "trials", 100, "number of trials")
	fl.StringSliceVar(&f.methods, "methods", checkmodel.MethodNames, "methods to compare")
	fl.Uint64Var(&f.seed, "seed", 1, "random seed")
	fl.StringVar(&f.out, "out", "", "directory for bench.md (a table like the seed's), trials.csv and bench.json")
	fl.BoolVar(&f.json, "json", false, "print one JSON document")
	return cmd
}

// mseMethodScore is one method in the JSON of `genlens mse bench`.
type mseMethodScore struct {
	MAE    num `json:"mae"`
	Std    num `json:"std"`
	Failed int `json:"failed"`
}

// mseBenchOutput is the JSON contract of `genlens mse bench`.
type mseBenchOutput struct {
	Dataset  string                    `json:"dataset"`
	Trials   int                       `json:"trials"`
	Methods  map[string]mseMethodScore `json:"methods"`
	Best     string                    `json:"best"`
	Wilcoxon map[string]num            `json:"wilcoxon"`
}

func runMSEBench(cmd *cobra.Command, f mseBenchFlags) error {
	if f.dataset == "" {
		return badUsage("mse bench: --dataset is required")
	}
	if err := guardOut(f.out, mseBenchOutputs, f.dataset); err != nil {
		return err
	}
	if f.trials < 1 {
		return badUsage("mse bench: --trials %d must be at least 1", f.trials)
	}
	cfg := checkmodel.DefaultConfig()
	var methods []checkmodel.Method
	for _, name := range f.methods {
		m, err := checkmodel.NewMethod(strings.TrimSpace(name), cfg)
		if err != nil {
			return usageError{err}
		}
		for _, prev := range methods {
			if prev.Name() == m.Name() {
				return badUsage("mse bench: method %q given twice", m.Name())
			}
		}
		methods = append(methods, m)
	}
	var src checkmodel.TrialSource
	seedKey := ""
	switch ds := strings.ToLower(f.dataset); ds {
	case "synthetic-a", "synthetic-b", "synthetic-c":
		src = checkmodel.SyntheticTrials(checkmodel.Noise(ds[len(ds)-1:]), 100, 10000, cfg)
		seedKey = ds
	default:
		if strings.HasPrefix(ds, "synthetic") {
			return badUsage("mse bench: unknown dataset %q (want synthetic-a, synthetic-b, synthetic-c or a CSV file)", f.dataset)
		}
		_, a, err := dataio.ReadCSV(f.dataset)
		if err != nil {
			return err
		}
		if a.Shape[1] < 2 {
			return &dataio.InputError{File: f.dataset, Msg: fmt.Sprintf("%d column: want the target in column 0 and features after it", a.Shape[1])}
		}
		xy, _ := a.Matrix()
		n, d := xy.Dims()
		x := mat.DenseCopyOf(xy.Slice(0, n, 1, d))
		y := mat.Col(nil, 0, xy)
		src, err = checkmodel.WindowTrials(x, y, 500, 500, cfg)
		if err != nil {
			return &dataio.InputError{File: f.dataset, Msg: fmt.Sprintf("%d rows: the protocol needs 1000 contiguous rows", n)}
		}
		seedKey = mseSeedKey(f.dataset)
	}
	tick, done := progress(cmd.ErrOrStderr(), f.trials, "mse bench")
	defer parallelTasks(f.trials)()
	res, err := checkmodel.Bench(src, checkmodel.BenchConfig{Trials: f.trials, Methods: methods, Seed: f.seed, Progress: tick})
	done()
	if err != nil {
		return err
	}
	out := mseBenchOutput{Dataset: f.dataset, Trials: f.trials, Methods: map[string]mseMethodScore{}, Best: res.Best, Wilcoxon: map[string]num{}}
	for _, m := range res.Methods {
		out.Methods[m.Name] = mseMethodScore{MAE: num(m.MAE), Std: num(m.Std), Failed: m.Failed}
	}
	for k, p := range res.Wilcoxon {
		out.Wilcoxon[k] = num(p)
	}
	if f.out != "" {
		if err := writeMSEBenchOut(f.out, &out, res, seedKey); err != nil {
			return err
		}
	}
	if f.json {
		return writeJSON(cmd.OutOrStdout(), out)
	}
	printMSEBench(cmd.OutOrStdout(), &out, res, seedKey)
	return nil
}

// mseSeedKey maps a LIBSVM file name to its row of the seed's Table 3.
func mseSeedKey(path string) string {
	base := strings.ToLower(filepath.Base(path))
	for _, k := range []string{"space_ga", "space-ga", "mg", "abalone", "cpusmall", "cadata"} {
		if strings.HasPrefix(base, k) {
			return strings.ReplaceAll(k, "_", "-")
		}
	}
	return ""
}

func printMSEBench(w io.Writer, o *mseBenchOutput, res *checkmodel.BenchResult, seedKey string) {
	fmt.Fprintf(w, "%s, %d trials: mean absolute error of the MSE estimate (std)\n\n", o.Dataset, o.Trials)
	seed := checkmodel.SeedTables[seedKey]
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "method\tMAE\tstd\tp vs best\t")
	if seed != nil {
		fmt.Fprint(tw, "seed MAE\tseed std\t")
	}
	fmt.Fprintln(tw)
	for _, m := range res.Methods {
		p := "best"
		if m.Name != res.Best {
			p = fmt.Sprintf("%.3g", res.Wilcoxon[m.Name])
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t", m.Name, mseFmtMAE(m.MAE), mseFmtMAE(m.Std), p)
		if seed != nil {
			if s, ok := seed[m.Name]; ok {
				fmt.Fprintf(tw, "%.3f\t%.3f\t", s.MAE, s.Std)
			} else {
				fmt.Fprint(tw, "-\t-\t")
			}
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	for _, m := range res.Methods {
		if m.Failed > 0 {
			fmt.Fprintf(w, "%s failed in %d trial(s): %v\n", m.Name, m.Failed, m.FirstError)
		}
	}
}

// mseFmtMAE prints as the seed's tables: three decimals, "NA" above 1000.
func mseFmtMAE(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) || v > 1000 {
		return "NA"
	}
	return fmt.Sprintf("%.3f", v)
}

// mseBenchMarkdown renders the result as a row of the seed's Table 1 / 3:
// bold for the best and every method the Wilcoxon test cannot tell from it
// at 5%, an asterisk on the lowest error and underline on the second.
func mseBenchMarkdown(o *mseBenchOutput, res *checkmodel.BenchResult, seedKey string) string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "Average absolute MSE estimation errors over %d trials (standard deviations in brackets). Bold: the lowest error and those not significantly different from it (Wilcoxon signed-rank test, 5%%); * lowest, underlined second lowest; NA: error above 1000.\n\n", o.Trials)
	order := make([]int, len(res.Methods))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, c int) int {
		switch x, y := res.Methods[a].MAE, res.Methods[c].MAE; {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	})
	second := ""
	if len(order) > 1 {
		second = res.Methods[order[1]].Name
	}
	b.WriteString("| Data set |")
	for _, m := range res.Methods {
		fmt.Fprintf(&b, " %s |", mseMethodLabel(m.Name))
	}
	b.WriteString("\n|---|")
	for range res.Methods {
		b.WriteString("---|")
	}
	fmt.Fprintf(&b, "\n| %s |", mseMDEscape(o.Dataset))
	for _, m := range res.Methods {
		cell := mseFmtMAE(m.MAE) + " (" + mseFmtMAE(m.Std) + ")"
		switch m.Name {
		case res.Best:
			cell = mseFmtMAE(m.MAE) + "* (" + mseFmtMAE(m.Std) + ")"
		case second:
			cell = "<u>" + mseFmtMAE(m.MAE) + "</u> (" + mseFmtMAE(m.Std) + ")"
		}
		if m.Name == res.Best || res.Wilcoxon[m.Name] >= 0.05 {
			cell = "**" + cell + "**"
		}
		fmt.Fprintf(&b, " %s |", cell)
	}
	b.WriteString("\n")
	if seed := checkmodel.SeedTables[seedKey]; seed != nil {
		fmt.Fprintf(&b, "| %s (seed) |", seedKey)
		for _, m := range res.Methods {
			if s, ok := seed[m.Name]; ok {
				fmt.Fprintf(&b, " %.3f (%.3f) |", s.MAE, s.Std)
			} else if m.Name == "naive" {
				b.WriteString(" - |")
			} else {
				b.WriteString(" NA |")
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// mseMethodLabel is a method's column heading in the seed's tables.
func mseMethodLabel(name string) string {
	switch name {
	case "kstar":
		return "K*"
	case "k":
		return "K"
	case "l":
		return "L"
	case "naive":
		return "naive"
	case "rvnne":
		return "RVNnE"
	case "m2rvn":
		return "M2RVN"
	}
	return strings.ToUpper(name)
}

// mseMDEscape escapes Markdown markup in a table cell.
func mseMDEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "*", `\*`, "_", `\_`, "<", "&lt;").Replace(s)
}

// mseBenchOutputs are the files 'mse bench --out' writes.
var mseBenchOutputs = []string{"bench.md", "trials.csv", "bench.json"}

func writeMSEBenchOut(dir string, o *mseBenchOutput, res *checkmodel.BenchResult, seedKey string) error {
	if err := prepareOut(dir); err != nil {
		return err
	}
	md := mseBenchMarkdown(o, res, seedKey)
	if err := atomicfile.Write(outPath(dir, "bench.md"), func(w io.Writer) error { _, err := io.WriteString(w, md); return err }); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	header := []string{"trial", "empirical_mse"}
	for _, m := range res.Methods {
		header = append(header, m.Name)
	}
	rows := make([][]float64, res.Trials)
	for t := range rows {
		rows[t] = []float64{float64(t + 1), res.Empirical[t]}
		for _, m := range res.Methods {
			rows[t] = append(rows[t], m.Estimates[t])
		}
	}
	// Non-finite estimates of failed trials cannot go through WriteCSV's
	// number format; write text cells instead.
	text := make([][]string, len(rows))
	for t, r := range rows {
		for _, v := range r {
			s := ""
			if !math.IsNaN(v) && !math.IsInf(v, 0) {
				s = strconv.FormatFloat(v, 'g', -1, 64)
			}
			text[t] = append(text[t], s)
		}
	}
	if err := dataio.WriteTable(outPath(dir, "trials.csv"), header, text); err != nil {
		return err
	}
	return dataio.WriteJSON(outPath(dir, "bench.json"), o)
}

// ---------------------------------------------------------------- demo

func init() { extraDemoSections = append(extraDemoSections, demoSection{order: 50, run: demoMSE}) }

// demoMSE monitors a regression model whose inputs drift: the check model
// sees the error rise in the chunks whose labels have not arrived yet.
func demoMSE(w io.Writer, dir string, r *rand.Rand) (report.Section, error) {
	const (
		trainRows, refRows = 300, 1000
		days, perDay       = 24, 200
		driftFrom          = 10  // first drifting day
		driftTo            = 1.2 // input mean shift on the last day
		labelDelay         = 7   // days until labels arrive
	)
	// The deployed model f: the seed's synthetic A relation, learnt from
	// 300 rows with standardised targets.
	xt, yt, err := checkmodel.Synthetic(checkmodel.NoiseA, trainRows, r)
	if err != nil {
		return report.Section{}, err
	}
	ym, ys := evalstat.Mean(yt), evalstat.Std(yt, 0)
	yn := make([]float64, len(yt))
	for i := range yt {
		yn[i] = (yt[i] - ym) / ys
	}
	fnet, err := nn.New([]int{1, 64, 64, 1}, r)
	if err != nil {
		return report.Section{}, err
	}
	if _, err := nn.Fit(fnet, xt, nn.MSE(yn), nn.DefaultTrainConfig(), r); err != nil {
		return report.Section{}, err
	}
	f := func(x *mat.Dense) []float64 {
		p := fnet.Predict1(x)
		for i := range p {
			p[i] = p[i]*ys + ym
		}
		return p
	}
	// A labelled reference period (not used to train f) for the check
	// model and the thresholds.
	xr, yr, err := checkmodel.Synthetic(checkmodel.NoiseA, refRows, r)
	if err != nil {
		return report.Section{}, err
	}
	m, err := checkmodel.Fit(xr, yr, f(xr), checkmodel.DefaultConfig(), r.Uint64())
	if err != nil {
		return report.Section{}, err
	}
	// Production: the input mean drifts upwards from day 10, where the
	// noise of Eq. 19 grows and f extrapolates.
	x := mat.NewDense(days*perDay, 1, nil)
	y := make([]float64, days*perDay)
	for d := 0; d < days; d++ {
		shift := 0.0
		if d >= driftFrom {
			shift = driftTo * float64(d-driftFrom+1) / float64(days-driftFrom)
		}
		xd, yd, err := checkmodel.Synthetic(checkmodel.NoiseA, perDay, r)
		if err != nil {
			return report.Section{}, err
		}
		for i := 0; i < perDay; i++ {
			v := xd.At(i, 0) + shift
			t := 3*v + 5
			// Same noise draw, moved to the shifted input.
			e := (yd[i] - (3*xd.At(i, 0)+5)*math.Sin(3*xd.At(i, 0)+5)) / (0.3 * (1 + math.Max(0, 3*xd.At(i, 0)+5)))
			x.Set(d*perDay+i, 0, v)
			y[d*perDay+i] = t*math.Sin(t) + 0.3*(1+math.Max(0, t))*e
		}
	}
	pred := f(x)
	rowEst, err := m.RowEstimates(x, pred)
	if err != nil {
		return report.Section{}, err
	}
	labelled := days - labelDelay // labels of days 0..labelled-1 have arrived
	realized := make([]float64, len(y))
	for i := range y {
		realized[i] = math.NaN()
		if i < labelled*perDay {
			realized[i] = (y[i] - pred[i]) * (y[i] - pred[i])
		}
	}
	chunks, err := monitor.ByCount(len(y), days)
	if err != nil {
		return report.Section{}, err
	}
	th, _ := mseReferenceThresholds(m, chunks)
	res, err := monitor.Evaluate(chunks, rowEst, realized, monitor.Options{Thresholds: th, NonNegative: true})
	if err != nil {
		return report.Section{}, err
	}
	if err := chartMSEChunks(outPath(dir, "mse_monitoring.png"), "Daily MSE: estimated now, realised when labels arrive", "day", res, th); err != nil {
		return report.Section{}, err
	}
	firstAlert, firstRealized := -1, -1
	table := report.Table{
		Caption: fmt.Sprintf("Daily chunks of %d rows; thresholds [%.2f, %.2f] from %d reference chunks; labels arrive %d days late", perDay, th.Lower, th.Upper, th.Chunks, labelDelay),
		Header:  []string{"day", "input shift", "estimated MSE", "band (±3 SE)", "realised MSE", "alert"},
	}
	for _, c := range res {
		shift := 0.0
		if c.Index >= driftFrom {
			shift = driftTo * float64(c.Index-driftFrom+1) / float64(days-driftFrom)
		}
		if c.Alert && firstAlert < 0 {
			firstAlert = c.Index
		}
		if !math.IsNaN(c.Realized) && th.Available() && c.Realized > th.Upper && firstRealized < 0 {
			firstRealized = c.Index
		}
		realised, alert := "(not yet)", ""
		if !math.IsNaN(c.Realized) {
			realised = fmt.Sprintf("%.2f", c.Realized)
		}
		if c.Alert {
			alert = "ALERT"
		}
		table.Rows = append(table.Rows, []string{strconv.Itoa(c.Index), fmt.Sprintf("%.2f", shift), fmt.Sprintf("%.2f", c.Estimate),
			fmt.Sprintf("%.2f - %.2f", c.Lower, c.Upper), realised, alert})
	}
	story := "The estimate never left the thresholds."
	if firstAlert >= 0 {
		story = fmt.Sprintf("The estimate first crossed the thresholds on day %d; that day's labels arrive on day %d.", firstAlert, firstAlert+labelDelay)
		if firstAlert >= labelled {
			story += fmt.Sprintf(" Today (day %d) no label of it has arrived: only the check model sees the error rise.", days-1)
		}
	}
	fmt.Fprintf(w, "mse monitoring: %d days x %d rows, inputs drifting from day %d, labels %d days late; %s\n", days, perDay, driftFrom, labelDelay, story)
	return report.Section{
		Title: "MSE of a regression model in production, before its labels arrive",
		Text: []string{
			fmt.Sprintf("A regression model f (the seed 004's synthetic A relation, y = (3x+5) sin(3x+5) + 0.3 (1 + max(0, 3x+5)) e, learnt from %d rows) serves %d rows a day. From day %d its inputs drift upwards, where the noise grows and f extrapolates; labels arrive %d days late, so today (day %d) the realised MSE is known up to day %d only.", trainRows, perDay, driftFrom, labelDelay, days-1, labelled-1),
			fmt.Sprintf("A check model h, trained once on %d labelled reference rows by the one-step objective K* (seed 004, Eq. 8), estimates each day's MSE from the inputs alone as mean 2 (h(x) - f(x))², with a band of ±3 sampling errors; the thresholds are mean ± 3 standard deviations of the realised MSE over chunks of the reference data. %s", refRows, story),
			"On your data: genlens mse fit --train reference.csv --target y --prediction y_pred --model check.json; then genlens mse estimate --model check.json --data today.csv --timestamp ts --period day --target y --out mse/",
		},
		Tables: []report.Table{table},
		Images: []report.Image{{File: "mse_monitoring.png", Caption: "Estimated MSE per day with its ±3 SE band, the realised MSE where labels have arrived, and the reference thresholds."}},
	}, nil
}
