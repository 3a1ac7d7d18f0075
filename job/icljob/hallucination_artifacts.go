package icljob

import (
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/internal/report/chart"
	"github.com/genlens/genlens/job"
)

// Artifacts returns the files of `hallucination simulate --out`:
// simulate.csv (one row per context size), tasks.csv (one row per task),
// simulate.json, rates_vs_n.png (the paper's Figure 3a) and phr_vs_thr.png
// (its Figure 3b).
func (r *HallucinationSimulateResult) Artifacts() []job.Artifact {
	return []job.Artifact{
		{Name: "simulate.csv", Write: r.writeSweepCSV},
		{Name: "tasks.csv", Write: r.writeTasksCSV},
		{Name: "simulate.json", Write: func(w io.Writer) error { return dataio.EncodeJSON(w, r) }},
		{Name: "rates_vs_n.png", Write: r.WriteRatesChart},
		{Name: "phr_vs_thr.png", Write: r.WriteCalibrationChart},
	}
}

func (r *HallucinationSimulateResult) writeSweepCSV(w io.Writer) error {
	rows := make([][]string, len(r.Rows))
	for i, s := range r.Rows {
		rows[i] = []string{strconv.Itoa(s.N), phrG(float64(s.PHRMean)), phrG(float64(s.THRMean)), phrG(float64(s.ExactPHRMean)),
			phrG(float64(s.MAEPHRExact)), phrG(float64(s.MAEPHRTHR)), job.CSVNum(s.R2PHRTHR), strconv.Itoa(s.Tasks)}
	}
	return dataio.EncodeTable(w, []string{"n", "phr_mean", "thr_mean", "exact_phr_mean", "mae_phr_vs_exact", "mae_phr_vs_thr", "r2_phr_vs_thr", "tasks"}, rows)
}

func (r *HallucinationSimulateResult) writeTasksCSV(w io.Writer) error {
	var rows [][]string
	for _, ts := range r.Tasks {
		for _, t := range ts {
			rows = append(rows, []string{strconv.Itoa(t.N), strconv.Itoa(t.Index + 1), phrG(t.X), phrG(t.PHR), phrG(t.StdErr), phrG(t.THR), phrG(t.ExactPHR),
				phrG(t.Total), phrG(t.Aleatoric), phrG(t.Epistemic), phrG(t.ExactTotal), phrG(t.ExactEpistemic)})
		}
	}
	return dataio.EncodeTable(w, []string{"n", "task", "x", "phr", "phr_stderr", "thr", "exact_phr", "total", "aleatoric", "epistemic", "exact_total", "exact_epistemic"}, rows)
}

// WriteRatesChart draws, as a PNG, the paper's Figure 3a: the mean PHR
// estimate (with a band of ± its mean absolute error against the exact
// PHR, clipped to [0, 1] as rates are), the exact PHR and the true
// hallucination rate against the context size n, on a log2 axis with
// ticks at n = 1, 2, 4, ... (a linear axis when some n is 0).
func (r *HallucinationSimulateResult) WriteRatesChart(w io.Writer) error {
	var xs, phr, exact, thr, lo, hi []float64
	positive := true
	for _, s := range r.Rows {
		xs = append(xs, float64(s.N))
		positive = positive && s.N > 0
		phr = append(phr, float64(s.PHRMean))
		exact = append(exact, float64(s.ExactPHRMean))
		thr = append(thr, float64(s.THRMean))
		lo = append(lo, math.Max(0, float64(s.PHRMean)-float64(s.MAEPHRExact)))
		hi = append(hi, math.Min(1, float64(s.PHRMean)+float64(s.MAEPHRExact)))
	}
	series := []chart.Series{
		{Name: "PHR, Algorithm 1 (band: ± mean abs. error vs exact)", X: xs, Y: phr, Lower: lo, Upper: hi},
		{Name: "exact PHR (Definition 4)", X: xs, Y: exact},
		{Name: "true hallucination rate (Definition 3)", X: xs, Y: thr},
	}
	const title = "Hallucination rates against context size"
	if positive {
		return job.PNGTo(w)(chart.NewLinesLog2(title, "context examples n (log scale)", "rate", series))
	}
	return job.PNGTo(w)(chart.NewLines(title, "context examples n", "rate", series))
}

// WriteCalibrationChart draws, as a PNG, the paper's Figure 3b: one point
// per task, the true hallucination rate against the PHR estimate, by
// context size.
func (r *HallucinationSimulateResult) WriteCalibrationChart(w io.Writer) error {
	groups := make([]chart.Series, len(r.Tasks))
	for i, ts := range r.Tasks {
		groups[i].Name = fmt.Sprintf("n = %d", r.Rows[i].N)
		for _, t := range ts {
			groups[i].X = append(groups[i].X, t.PHR)
			groups[i].Y = append(groups[i].Y, t.THR)
		}
	}
	return job.PNGTo(w)(chart.NewScatter("Calibration: THR against PHR", "posterior hallucination rate (Algorithm 1)", "true hallucination rate", groups, true))
}

// Artifacts returns the files of `hallucination run --out`: items.csv
// (one row per query; exact_phr empty for the openai backend) and
// run.json.
func (r *HallucinationRunResult) Artifacts() []job.Artifact {
	return []job.Artifact{
		{Name: "items.csv", Write: r.writeCSV},
		{Name: "run.json", Write: func(w io.Writer) error { return dataio.EncodeJSON(w, r) }},
	}
}

func (r *HallucinationRunResult) writeCSV(w io.Writer) error {
	rows := make([][]string, len(r.Items))
	for i, it := range r.Items {
		e := ""
		if it.ExactPHR != nil {
			e = job.CSVNum(*it.ExactPHR)
		}
		rows[i] = []string{it.ID, job.CSVNum(it.PHR), job.CSVNum(it.PHRStdErr), job.CSVNum(it.Total), job.CSVNum(it.Aleatoric), job.CSVNum(it.Epistemic), job.CSVNum(it.ErrorRate), e, it.Error}
	}
	return dataio.EncodeTable(w, []string{"id", "phr", "phr_stderr", "total", "aleatoric", "epistemic", "error_rate", "exact_phr", "error"}, rows)
}

// phrG writes a number in the shortest form that parses back (NaN as
// "NaN", as the simulation tables always have).
func phrG(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
