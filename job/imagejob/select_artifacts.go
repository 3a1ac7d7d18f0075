package imagejob

import (
	"io"
	"strings"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/internal/report/chart"
	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/metric/online"
)

// Artifacts returns the files of `select --out`: steps.csv (per step, the
// mean and standard deviation over trials of every algorithm's regret,
// average regret and optimal-pick ratio), regret.png,
// optimal_pick_ratio.png and select.json.
func (r *SelectResult) Artifacts() []job.Artifact {
	what := strings.ToUpper(r.Run.Metric)
	return []job.Artifact{
		{Name: "steps.csv", Write: r.WriteStepsCSV},
		{Name: "regret.png", Write: func(w io.Writer) error {
			return r.writeChart(w, "Regret ("+what+"), mean ± std over trials", "regret",
				func(a online.AlgorithmResult) online.Curve { return a.Regret })
		}},
		{Name: "optimal_pick_ratio.png", Write: func(w io.Writer) error {
			return r.writeChart(w, "Optimal-pick ratio ("+what+")", "fraction of steps on the best generator",
				func(a online.AlgorithmResult) online.Curve { return a.OptimalPickRatio })
		}},
		{Name: "select.json", Write: func(w io.Writer) error { return dataio.EncodeJSON(w, r) }},
	}
}

// WriteStepsCSV writes steps.csv: a step column, then for every algorithm
// <name>_<curve>_mean and <name>_<curve>_std for the curves regret,
// average_regret and optimal_pick_ratio.
func (r *SelectResult) WriteStepsCSV(w io.Writer) error {
	res := r.Run
	header := []string{"step"}
	for _, a := range res.Algorithms {
		for _, m := range []string{"regret", "average_regret", "optimal_pick_ratio"} {
			header = append(header, a.Name+"_"+m+"_mean", a.Name+"_"+m+"_std")
		}
	}
	rows := make([][]float64, res.Steps)
	for t := range rows {
		rows[t] = []float64{float64(t + 1)}
		for _, a := range res.Algorithms {
			for _, c := range []online.Curve{a.Regret, a.AverageRegret, a.OptimalPickRatio} {
				rows[t] = append(rows[t], c.Mean[t], c.Std[t])
			}
		}
	}
	return dataio.EncodeCSV(w, header, rows)
}

// writeChart draws one curve of every algorithm against the step, with a
// band of ± one standard deviation over trials, as a PNG.
func (r *SelectResult) writeChart(w io.Writer, title, ylabel string, curve func(online.AlgorithmResult) online.Curve) error {
	res := r.Run
	xs := make([]float64, res.Steps)
	for t := range xs {
		xs[t] = float64(t + 1)
	}
	var series []chart.Series
	for _, a := range res.Algorithms {
		c := curve(a)
		lo, hi := make([]float64, len(c.Mean)), make([]float64, len(c.Mean))
		for i := range c.Mean {
			lo[i], hi[i] = c.Mean[i]-c.Std[i], c.Mean[i]+c.Std[i]
		}
		series = append(series, chart.Series{Name: a.Name, X: xs, Y: c.Mean, Lower: lo, Upper: hi})
	}
	return job.PNGTo(w)(chart.NewLines(title, "step", ylabel, series))
}
