package msejob

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/internal/format/jsonnum"
	"github.com/genlens/genlens/internal/report/chart"
	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/metric/checkmodel"
	"github.com/genlens/genlens/metric/monitor"
)

// Artifacts returns the files of `mse estimate --out`: chunks.csv (one
// row per chunk), estimate.json (the --json document) and mse_chunks.png
// (estimate, interval, realised MSE and thresholds per chunk).
func (r *EstimateResult) Artifacts() []job.Artifact {
	return []job.Artifact{
		{Name: "chunks.csv", Write: r.writeCSV},
		{Name: "estimate.json", Write: func(w io.Writer) error { return dataio.EncodeJSON(w, r) }},
		{Name: "mse_chunks.png", Write: func(w io.Writer) error {
			xlabel := "chunk"
			if len(r.Monitor) > 0 && r.Monitor[0].Period != "" {
				xlabel = "time (first row of each period)"
			}
			return WriteChunkChart(w, "Estimated and realised MSE per chunk", xlabel, r.Monitor, r.Thresholds)
		}},
	}
}

func (r *EstimateResult) writeCSV(w io.Writer) error {
	cell := func(v float64) string {
		if math.IsNaN(v) {
			return ""
		}
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	header := []string{"index", "start", "end", "rows", "period", "estimated_mse", "sampling_error", "lower", "upper", "realized_mse", "alert"}
	drift := r.Check != nil && r.Check.Drift != nil
	if drift {
		header = append(header, "out_of_reference", "extrapolating", "reconstruction_error", "drift_alert")
		for _, f := range r.Check.Drift.Features {
			header = append(header, "ks_"+f, "p_"+f)
		}
		header = append(header, "thin_support", "thin_support_limit", "ks_alert")
	}
	// Appended last, so that readers of the older columns by position
	// keep working. lower and upper are the chunk's interval, the one
	// that decides alert (estimate_lower and estimate_upper, the names
	// it had first, repeat it); se_lower and se_upper the sampling band
	// estimated_mse ∓ 3 sampling_error.
	header = append(header, "estimate_lower", "estimate_upper", "se_lower", "se_upper")
	rows := [][]string{header}
	for _, c := range r.Monitor {
		row := []string{strconv.Itoa(c.Index), strconv.Itoa(c.Start), strconv.Itoa(c.End), strconv.Itoa(c.Rows()), c.Period,
			cell(c.Estimate), cell(c.SamplingError), cell(c.EstimateLower), cell(c.EstimateUpper), cell(c.Realized), strconv.FormatBool(c.Alert)}
		if drift && c.Drift != nil {
			d := c.Drift
			row = append(row, cell(d.OutOfReference), strconv.FormatBool(d.Extrapolating), cell(d.ReconstructionError), strconv.FormatBool(d.DriftAlert))
			for _, f := range d.Features {
				row = append(row, cell(f.KS), cell(f.P))
			}
			row = append(row, cell(d.ThinSupport), cell(d.ThinLimit), strconv.FormatBool(d.KSAlert))
		}
		row = append(row, cell(c.EstimateLower), cell(c.EstimateUpper), cell(c.Lower), cell(c.Upper))
		rows = append(rows, row)
	}
	return dataio.EncodeTable(w, nil, rows)
}

// WriteChunkChart draws the monitoring chart as a PNG: the estimated
// MSE per chunk with its interval (the one that decides the alert,
// Result.EstimateLower and EstimateUpper), the realised MSE where labels
// exist, and the thresholds when there are any. The x axis is the
// chunks' time (their first timestamps) when every chunk is a period,
// and xlabel then names it; otherwise the chunk index.
func WriteChunkChart(w io.Writer, title, xlabel string, res []monitor.Result, th monitor.Thresholds) error {
	var est, real chart.Series
	est.Name, real.Name = "estimated MSE (±3 SE)", "realised MSE"
	if len(res) > 0 && res[0].IntervalCalibrated {
		est.Name = fmt.Sprintf("estimated MSE (%g%% interval)", 100*monitor.IntervalLevel)
	}
	timed := len(res) > 0
	hourly := false
	for _, r := range res {
		if r.Period == "" || r.From.IsZero() {
			timed = false
		}
		hourly = hourly || strings.Contains(r.Period, "T")
	}
	band := true
	for _, r := range res {
		x := float64(r.Index)
		if timed {
			x = float64(r.From.Unix())
		}
		est.X = append(est.X, x)
		est.Y = append(est.Y, r.Estimate)
		if math.IsNaN(r.EstimateLower) || math.IsNaN(r.EstimateUpper) {
			band = false
		}
		est.Lower = append(est.Lower, r.EstimateLower)
		est.Upper = append(est.Upper, r.EstimateUpper)
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
	if timed {
		layout := "2006-01-02"
		if hourly {
			layout = "01-02 15:04"
		}
		return job.PNGTo(w)(chart.NewTimeLines(title, xlabel, "MSE", series, res[0].From.Location(), layout))
	}
	return job.PNGTo(w)(chart.NewLines(title, xlabel, "MSE", series))
}

// Artifacts returns the files of `mse bench --out`: bench.md (the result
// as a row of the paper's Table 1 or 3), trials.csv (every trial's
// empirical MSE and estimates) and bench.json (the --json document).
func (r *BenchResult) Artifacts() []job.Artifact {
	return []job.Artifact{
		{Name: "bench.md", Write: func(w io.Writer) error { _, err := io.WriteString(w, r.Markdown()); return err }},
		{Name: "trials.csv", Write: r.writeTrials},
		{Name: "bench.json", Write: func(w io.Writer) error { return dataio.EncodeJSON(w, r) }},
	}
}

func (r *BenchResult) writeTrials(w io.Writer) error {
	res := r.Bench
	header := []string{"trial", "empirical_mse"}
	for _, m := range res.Methods {
		header = append(header, m.Name)
	}
	rows := [][]string{header}
	for t := range res.Trials {
		// Estimates of failed trials are not finite: empty cells.
		row := []string{strconv.Itoa(t + 1), job.CSVNum(jsonnum.Num(res.Empirical[t]))}
		for _, m := range res.Methods {
			row = append(row, job.CSVNum(jsonnum.Num(m.Estimates[t])))
		}
		rows = append(rows, row)
	}
	return dataio.EncodeTable(w, nil, rows)
}

// Markdown renders the result as a row of the paper's Table 1 or 3: bold
// for the best and every method the Wilcoxon test cannot tell from it at
// 5%, an asterisk on the lowest error and underline on the second, and
// the published row below when there is one.
func (r *BenchResult) Markdown() string {
	res := r.Bench
	var b bytes.Buffer
	fmt.Fprintf(&b, "Average absolute MSE estimation errors over %d trials (standard deviations in brackets). Bold: the lowest error and those not significantly different from it (Wilcoxon signed-rank test, 5%%); * lowest, underlined second lowest; NA: error above 1000.\n\n", r.Trials)
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
	fmt.Fprintf(&b, "\n| %s |", strings.NewReplacer("|", `\|`, "*", `\*`, "_", `\_`, "<", "&lt;").Replace(r.Dataset))
	for _, m := range res.Methods {
		mae, std := FormatMAE(m.MAE), FormatMAE(m.Std)
		cell := mae + " (" + std + ")"
		switch m.Name {
		case res.Best:
			cell = mae + "* (" + std + ")"
		case second:
			cell = "<u>" + mae + "</u> (" + std + ")"
		}
		if m.Name == res.Best || res.Wilcoxon[m.Name] >= 0.05 {
			cell = "**" + cell + "**"
		}
		fmt.Fprintf(&b, " %s |", cell)
	}
	b.WriteString("\n")
	if published := checkmodel.PaperTables[r.TableKey]; published != nil {
		fmt.Fprintf(&b, "| %s (seed) |", r.TableKey)
		for _, m := range res.Methods {
			if s, ok := published[m.Name]; ok {
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

// mseMethodLabel is a method's column heading in the paper's tables.
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
