package demo

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strconv"

	"github.com/genlens/genlens/internal/nn"
	"github.com/genlens/genlens/internal/report"
	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/job/msejob"
	"github.com/genlens/genlens/metric/checkmodel"
	"github.com/genlens/genlens/metric/evalstat"
	"github.com/genlens/genlens/metric/monitor"

	"gonum.org/v1/gonum/mat"
)

// mseSection monitors a regression model whose inputs drift: the check model
// sees the error rise in the chunks whose labels have not arrived yet.
func mseSection(ctx context.Context, w io.Writer, dir string, r *rand.Rand) (report.Section, error) {
	const (
		trainRows, refRows = 300, 1000
		days, perDay       = 24, 200
		driftFrom          = 10  // first drifting day
		driftTo            = 1.2 // input mean shift on the last day
		labelDelay         = 7   // days until labels arrive
	)
	// The deployed model f: the paper's synthetic A relation, learnt from
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
	if _, err := nn.Fit(ctx, fnet, xt, nn.MSE(yn), nn.DefaultTrainConfig(), r); err != nil {
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
	m, err := checkmodel.Fit(ctx, xr, yr, f(xr), checkmodel.DefaultConfig(), r.Uint64())
	if err != nil {
		return report.Section{}, err
	}
	// The reference's features, for extrapolation and drift (mse fit
	// records them in the model file).
	if m.Drift, err = monitor.FitDrift(xr, m.Columns.Features); err != nil {
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
	feats := make([][]float64, len(y))
	for i := range feats {
		feats[i] = x.RawRowView(i)
	}
	rep, err := monitor.Run(monitor.Input{Chunks: chunks, Estimates: rowEst, Realized: realized,
		Reference: m.Reference.SquaredErrors, NonNegative: true, Drift: m.Drift, Features: feats})
	if err != nil {
		return report.Section{}, err
	}
	res, th := rep.Results, rep.Thresholds
	chart := job.Artifact{Name: "mse_monitoring.png", Write: func(w io.Writer) error {
		return msejob.WriteChunkChart(w, "Daily MSE: estimated now, realised when labels arrive", "day", res, th)
	}}
	if err := writeArtifact(dir, chart); err != nil {
		return report.Section{}, err
	}
	firstAlert, firstRealized, firstExtrapolating := -1, -1, -1
	table := report.Table{
		Caption: fmt.Sprintf("Daily chunks of %d rows; thresholds [%.2f, %.2f] from %d reference chunks; labels arrive %d days late", perDay, th.Lower, th.Upper, th.Chunks, labelDelay),
		Header:  []string{"day", "input shift", "estimated MSE", "band (±3 SE)", "realised MSE", "alert", "out of reference", "KS of x (p)"},
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
		if c.Drift.Extrapolating && firstExtrapolating < 0 {
			firstExtrapolating = c.Index
		}
		out := fmt.Sprintf("%.1f%%", 100*c.Drift.OutOfReference)
		if c.Drift.Extrapolating {
			out += " EXTRAPOLATING"
		}
		ks := c.Drift.Features[0]
		table.Rows = append(table.Rows, []string{strconv.Itoa(c.Index), fmt.Sprintf("%.2f", shift), fmt.Sprintf("%.2f", c.Estimate),
			fmt.Sprintf("%.2f - %.2f", c.Lower, c.Upper), realised, alert, out, fmt.Sprintf("%.2f (%.2g)", ks.KS, ks.P)})
	}
	story := "The estimate never left the thresholds."
	if firstAlert >= 0 {
		story = fmt.Sprintf("The estimate first crossed the thresholds on day %d; that day's labels arrive on day %d.", firstAlert, firstAlert+labelDelay)
		if firstAlert >= labelled {
			story += fmt.Sprintf(" Today (day %d) no label of it has arrived: only the check model sees the error rise.", days-1)
		}
	}
	if firstExtrapolating >= 0 {
		story += fmt.Sprintf(" From day %d over %.0f%% of a day's inputs lie beyond the reference rows' range: there the estimate is an extrapolation, and the table says so.", firstExtrapolating, 100*rep.MaxOutOfReference)
	}
	fmt.Fprintf(w, "mse monitoring: %d days x %d rows, inputs drifting from day %d, labels %d days late. %s\n", days, perDay, driftFrom, labelDelay, story)
	return report.Section{
		Title: "MSE of a regression model in production, before its labels arrive",
		Text: []string{
			fmt.Sprintf("A regression model f (the one-step MSE paper's synthetic A relation, y = (3x+5) sin(3x+5) + 0.3 (1 + max(0, 3x+5)) e, learnt from %d rows) serves %d rows a day. From day %d its inputs drift upwards, where the noise grows and f extrapolates; labels arrive %d days late, so today (day %d) the realised MSE is known up to day %d only.", trainRows, perDay, driftFrom, labelDelay, days-1, labelled-1),
			fmt.Sprintf("A check model h, trained once on %d labelled reference rows by the one-step objective K* (one-step MSE estimation, Eq. 8), estimates each day's MSE from the inputs alone as mean c · 2 (h(x) - f(x))² (Eq. 11, with c = %.2f calibrating the estimate to the realised MSE on held-out folds of the reference rows), with a band of ±3 sampling errors; the thresholds are mean ± 3 standard deviations of the realised MSE over chunks of the reference data. %s", refRows, m.Calibration.FactorOrOne(), story),
			"On your data:",
		},
		Commands: []string{"genlens mse fit --train reference.csv --target y --prediction y_pred --model check.json", "genlens mse estimate --model check.json --data today.csv --timestamp ts --period day --target y --out mse/"},
		Tables:   []report.Table{table},
		Images:   []report.Image{{File: "mse_monitoring.png", Caption: "Estimated MSE per day with its ±3 SE band, the realised MSE where labels have arrived, and the reference thresholds."}},
	}, nil
}
