package msejob

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/metric/checkmodel"
	"github.com/genlens/genlens/metric/monitor"
)

var num = job.FormatNum

func estimateText(w io.Writer, _ *EstimateRequest, o *EstimateResult) {
	// Estimate and realised MSE side by side only over the same rows: the
	// unlabelled rows are often the newest, the ones a drift moved.
	if o.RealizedMSE != nil && o.EstimatedLabelledMSE != nil && *o.Labelled > 0 {
		fmt.Fprintf(w, "%s: %d rows, %s; MSE of %s over the %d labelled rows: estimated %s, realised %s; estimated over all %d rows: %s\n",
			o.Data, o.Rows, o.Chunking, o.Check.Columns.Prediction, *o.Labelled, num(float64(*o.EstimatedLabelledMSE)), num(float64(*o.RealizedMSE)),
			o.Rows, num(float64(o.EstimatedMSE)))
	} else {
		fmt.Fprintf(w, "%s: %d rows, %s; estimated MSE of %s over all %d rows: %s", o.Data, o.Rows, o.Chunking, o.Check.Columns.Prediction, o.Rows, num(float64(o.EstimatedMSE)))
		if o.RealizedMSE != nil {
			fmt.Fprint(w, "; no label has arrived yet")
		}
		fmt.Fprintln(w)
	}
	if math.IsNaN(float64(o.UpperThreshold)) {
		fmt.Fprintf(w, "thresholds: unavailable (the reference data holds %d chunk(s) of %d rows; 2 are needed)\n\n", o.ReferenceCount, o.ReferenceRows)
	} else {
		rule := "the estimate outside the thresholds (the model file holds no held-out estimates to calibrate the interval: lower and upper are the estimate ∓ 3 standard errors)"
		if len(o.Chunks) > 0 && o.Chunks[0].IntervalCalibrated {
			rule = fmt.Sprintf("the chunk's %g%% interval (lower, upper) wholly beyond the thresholds, or reaching above the upper one for an extrapolating chunk", 100*monitor.IntervalLevel)
		}
		fmt.Fprintf(w, "thresholds: [%s, %s] for chunks of %d rows, from the reference's losses (%d chunks' worth); %d alert(s): %s\n\n",
			num(float64(o.LowerThreshold)), num(float64(o.UpperThreshold)), o.ReferenceRows, o.ReferenceCount, o.Alerts, rule)
	}
	drift := o.Report != nil && o.Report.Results != nil && o.Check.Drift != nil
	if drift {
		th := o.Report.DriftThresholds
		fmt.Fprintf(w, "extrapolating: %d chunk(s) with rows in thin support above its limit or over %g%% of rows outside the reference ranges (more for a small reference); drift: reconstruction error thresholds [%s, %s], %d drift alert(s)\n",
			*o.Extrapolating, 100*o.Report.MaxOutOfReference, num(th.Lower), num(th.Upper), *o.DriftAlerts)
		if k, d := len(o.Check.Drift.Components), len(o.Check.Drift.Features); k == d {
			fmt.Fprintf(w, "(the reconstruction error is 0: %d principal component(s) are needed for 65%% of the reference's variance, all there are; see the per-feature drift below)\n", k)
		}
		fmt.Fprintln(w)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "chunk\tperiod\trows\testimated MSE\tlower\tupper\trealised MSE\talert\t")
	if drift {
		fmt.Fprint(tw, "out of ref.\textrapolating\trecon. error\tdrift\t")
	}
	fmt.Fprintln(tw)
	var why []string
	for i, c := range o.Chunks {
		p := c.Period
		if p == "" {
			p = fmt.Sprintf("%d-%d", c.Start, c.End-1)
		}
		alert := ""
		if c.Alert {
			alert = "ALERT"
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t", c.Index, p, c.Rows, num(float64(c.EstimatedMSE)),
			num(float64(c.Lower)), num(float64(c.Upper)), num(float64(c.RealizedMSE)), alert)
		if drift && c.DriftView != nil {
			ex, da := "", ""
			if c.Extrapolating {
				ex = "EXTRAPOLATING"
				why = append(why, fmt.Sprintf("chunk %d: %s", c.Index, o.Monitor[i].Drift.Why(o.Check.Drift, c.Rows)))
			}
			if c.DriftAlert {
				da = "DRIFT (" + strings.Join(o.Monitor[i].Drift.DriftSignals(), ", ") + ")"
			}
			fmt.Fprintf(tw, "%.1f%%\t%s\t%s\t%s\t", 100*float64(c.OutOfReference), ex, num(float64(c.ReconstructionError)), da)
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	if len(why) > 0 {
		fmt.Fprintln(w, "\nThe estimates of extrapolating chunks come from inputs the check model never saw (they may be far off):")
		for _, s := range why {
			fmt.Fprintln(w, "  "+s)
		}
	}
	if drift {
		featureDriftText(w, o)
	}
}

// featureDriftText prints each feature's Kolmogorov-Smirnov statistic
// and p-value per chunk.
func featureDriftText(w io.Writer, o *EstimateResult) {
	fmt.Fprintln(w, "\nunivariate drift: Kolmogorov-Smirnov statistic against the reference (p-value)")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "chunk\t")
	for _, name := range o.Check.Drift.Features {
		fmt.Fprintf(tw, "%s\t", name)
	}
	fmt.Fprintln(tw)
	for _, c := range o.Chunks {
		fmt.Fprintf(tw, "%d\t", c.Index)
		for _, name := range o.Check.Drift.Features {
			f := c.Features[name]
			fmt.Fprintf(tw, "%.3f (%s)\t", float64(f.KS), strconv.FormatFloat(float64(f.P), 'g', 2, 64))
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
}

func benchText(w io.Writer, _ *BenchRequest, o *BenchResult) {
	res := o.Bench
	fmt.Fprintf(w, "%s, %d trials: mean absolute error of the MSE estimate (std)\n\n", o.Dataset, o.Trials)
	published := checkmodel.PaperTables[o.TableKey]
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "method\tMAE\tstd\tp vs best\t")
	if published != nil {
		fmt.Fprint(tw, "paper MAE\tpaper std\t")
	}
	fmt.Fprintln(tw)
	for _, m := range res.Methods {
		p := "best"
		if m.Name != res.Best {
			p = fmt.Sprintf("%.3g", res.Wilcoxon[m.Name])
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t", m.Name, FormatMAE(m.MAE), FormatMAE(m.Std), p)
		if published != nil {
			if s, ok := published[m.Name]; ok {
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

func fitText(w io.Writer, f *FitRequest, res *FitResult) {
	fmt.Fprintf(w, "check model (%s) trained on %d rows of %s, %d features: %s\n", res.Objective, res.Rows, f.Train, len(res.Features), strings.Join(res.Features, ", "))
	fmt.Fprintf(w, "reference MSE of %s: realised %s, estimated %s (in-sample", res.Prediction, num(float64(res.ReferenceRealizedMSE)), num(float64(res.ReferenceEstimatedMSE)))
	if c := res.Check.Calibration; c.Folds > 0 {
		fmt.Fprintf(w, "; raw %s x calibration %s from %d held-out folds", num(float64(res.ReferenceRawEstimatedMSE)), num(float64(res.CalibrationFactor)), c.Folds)
	}
	fmt.Fprintln(w, ")")
	fmt.Fprintf(w, "saved to %s\n", f.Model)
}
