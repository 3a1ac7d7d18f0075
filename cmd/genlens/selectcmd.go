package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"gonum.org/v1/gonum/mat"

	"genlens/chart"
	"genlens/dataio"
	"genlens/frechet"
	"genlens/online"
	"genlens/report"
)

func init() {
	extraCommands = append(extraCommands, newSelectCmd)
	extraDemoSections = append(extraDemoSections, demoSection{order: 20, run: demoSelect})
}

type selectFlags struct {
	score, ref, algos, out string
	refKey, poolsKey       string
	pools                  []string
	steps, batch, trials   int
	delta, bonusScale, tol float64
	seed                   uint64
	json                   bool
}

func newSelectCmd() *cobra.Command {
	var f selectFlags
	cmd := &cobra.Command{
		Use:   "select --score fid|is --pools G1.npy G2.npy ... [--ref R.npy|STATS.npz] [flags]",
		Short: "Online selection of the best generator (FID-UCB, IS-UCB) simulated on sample pools",
		Long: `select simulates the online protocol of seed 001 (Protocol 1) on pools of
pre-computed samples, one pool per generator: at each of --steps steps an
algorithm picks a generator and draws --batch rows from its pool (without
replacement), updating only that generator's estimate. It reports which
generator is best on its whole pool and, per algorithm over --trials trials,
the final regret and optimal-pick ratio, and how often each generator was drawn.

  --score fid  pools are feature rows; --ref gives the reference (real) rows or
               a statistics .npz (mu, sigma); algorithms fid-ucb, naive-ucb, greedy
  --score is   pools are class-probability rows; algorithms is-ucb, naive-ucb, greedy

An .npz of several arrays needs --ref-key or --pools-key to name the array of
rows (a --ref-key also reads rows from an .npz that holds mu and sigma).

--out DIR writes per-step curves (steps.csv: mean and std over trials per
algorithm) and regret.png / optimal_pick_ratio.png.`,
		Example: `  genlens select --score fid --ref real.npy --pools g1.npy g2.npy g3.npy --out sel/
  genlens select --score is --pools p1.npy p2.npy --trials 50 --json`,
		Args: args(cobra.ArbitraryArgs),
		RunE: func(cmd *cobra.Command, extra []string) error {
			f.pools = append(f.pools, extra...)
			return runSelect(cmd, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.score, "score", "fid", "fid or is")
	fl.StringSliceVar(&f.pools, "pools", nil, "one sample pool per generator (.npy/.npz/.csv); more may follow as arguments")
	fl.StringVar(&f.ref, "ref", "", "fid: reference feature rows or statistics .npz (mu, sigma)")
	fl.StringVar(&f.refKey, "ref-key", "", "array of feature rows inside an .npz --ref (rather than its mu, sigma)")
	fl.StringVar(&f.poolsKey, "pools-key", "", "array of rows inside each .npz pool")
	fl.StringVar(&f.algos, "algos", "", "comma-separated algorithms (default: fid-ucb,naive-ucb,greedy or is-ucb,naive-ucb,greedy)")
	fl.IntVar(&f.steps, "steps", 1000, "steps T per trial")
	fl.IntVar(&f.batch, "batch", 5, "rows b drawn per step")
	fl.IntVar(&f.trials, "trials", 20, "independent trials")
	fl.Float64Var(&f.delta, "delta", online.DefaultDelta, "failure probability δ of the confidence bounds")
	fl.Float64Var(&f.tol, "tolerance", frechet.ProbTolerance, "is: how far a class-probability row may sum from 1; above the default, rows are rescaled to sum to 1")
	fl.Float64Var(&f.bonusScale, "bonus-scale", online.DefaultBonusScale, "multiplier of the confidence bonuses (the constant the seed hides in O~(.); 1 = the proofs' explicit constants)")
	fl.Uint64Var(&f.seed, "seed", 1, "random seed")
	fl.StringVar(&f.out, "out", "", "directory for steps.csv, regret.png, optimal_pick_ratio.png, select.json")
	fl.BoolVar(&f.json, "json", false, "print one JSON document")
	return cmd
}

type selectAlgorithm struct {
	RegretFinal           meanStd   `json:"regret_final"`
	AverageRegretFinal    meanStd   `json:"average_regret_final"`
	OptimalPickRatioFinal meanStd   `json:"optimal_pick_ratio_final"`
	Picks                 []float64 `json:"picks"`
}

// selectOutput is the JSON contract of `genlens select`.
type selectOutput struct {
	Best       int                        `json:"best"`
	Scores     []num                      `json:"scores"`
	Score      string                     `json:"score"`
	Steps      int                        `json:"steps"`
	Batch      int                        `json:"batch"`
	Trials     int                        `json:"trials"`
	Algorithms map[string]selectAlgorithm `json:"algorithms"`
	order      []string
}

func runSelect(cmd *cobra.Command, f selectFlags) error {
	if f.score != "fid" && f.score != "is" {
		return badUsage("select: --score %q: want fid or is", f.score)
	}
	if len(f.pools) < 2 {
		return badUsage("select: give at least 2 generator pools with --pools")
	}
	if err := guardOut(f.out, selectOutputs, append([]string{f.ref}, f.pools...)...); err != nil {
		return err
	}
	if f.steps < 1 || f.batch < 1 || f.trials < 1 {
		return badUsage("select: --steps, --batch and --trials must be positive")
	}
	if !(f.bonusScale > 0) {
		return badUsage("select: --bonus-scale %v: want a positive number", f.bonusScale)
	}
	if !(f.delta > 0 && f.delta < 1) {
		return badUsage("select: --delta %v: want a value in (0, 1)", f.delta)
	}
	if f.algos == "" {
		f.algos = f.score + "-ucb,naive-ucb,greedy"
	}
	algos, err := parseAlgos(f.algos)
	if err != nil {
		return err
	}
	var fidRules []online.FIDRule
	var isRules []online.ISRule
	for _, name := range algos {
		if f.score == "fid" {
			r, err := online.ParseFIDRule(name)
			if err != nil {
				return usageError{err}
			}
			fidRules = append(fidRules, r)
		} else {
			r, err := online.ParseISRule(name)
			if err != nil {
				return usageError{err}
			}
			isRules = append(isRules, r)
		}
	}
	if f.score == "fid" && f.ref == "" {
		return badUsage("select: --score fid needs --ref (reference rows or a statistics .npz)")
	}
	if f.score == "is" && (f.ref != "" || f.refKey != "") {
		return badUsage("select: --ref is for --score fid; IS needs no reference")
	}
	ro := rowsOpt{key: f.poolsKey, keyFlag: "--pools-key", probs: f.score == "is"}
	pools := make([]*mat.Dense, len(f.pools))
	for g, p := range f.pools {
		x, err := readFeatures(p, ro)
		if err != nil {
			return err
		}
		if r, c := x.Dims(); r < f.batch {
			return &dataio.InputError{File: p, Msg: fmt.Sprintf("pool has %d rows, fewer than one batch of %d", r, f.batch)}
		} else if g > 0 && c != pools[0].RawMatrix().Cols {
			return &dataio.InputError{File: p, Msg: fmt.Sprintf("%d columns, %s has %d", c, f.pools[0], pools[0].RawMatrix().Cols)}
		}
		pools[g] = x
	}
	tick, done := progress(cmd.ErrOrStderr(), f.trials, "trials")
	defer parallelTasks(f.trials)()
	sim := online.Simulation{Steps: f.steps, Batch: f.batch, Trials: f.trials, Seed: f.seed, Progress: func(int, int) { tick() }}
	var res *online.Result
	switch f.score {
	case "fid":
		res, err = selectFID(sim, f, fidRules, pools)
	case "is":
		res, err = selectIS(sim, f, isRules, pools)
	}
	done()
	if err != nil {
		return err
	}
	out := selectOutput{Best: res.Best, Scores: nums(res.Scores), Score: f.score, Steps: f.steps, Batch: f.batch, Trials: f.trials, Algorithms: map[string]selectAlgorithm{}}
	for _, a := range res.Algorithms {
		out.Algorithms[a.Name] = selectAlgorithm{
			RegretFinal:           meanStd{num(a.FinalRegret.Mean), num(a.FinalRegret.Std)},
			AverageRegretFinal:    meanStd{num(a.FinalAverageRegret.Mean), num(a.FinalAverageRegret.Std)},
			OptimalPickRatioFinal: meanStd{num(a.FinalOptimalPickRatio.Mean), num(a.FinalOptimalPickRatio.Std)},
			Picks:                 a.Picks,
		}
		out.order = append(out.order, a.Name)
	}
	if err := writeSelectArtifacts(f.out, res, &out); err != nil {
		return err
	}
	if f.json {
		return writeJSON(cmd.OutOrStdout(), out)
	}
	printSelect(cmd.OutOrStdout(), f.pools, &out)
	return nil
}

// parseAlgos splits --algos into trimmed names, refusing empty and
// repeated ones; the score's parser checks that each exists.
func parseAlgos(list string) ([]string, error) {
	var names []string
	seen := map[string]bool{}
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			return nil, badUsage("select: --algos %q has an empty entry", list)
		}
		if seen[name] {
			return nil, badUsage("select: --algos lists %s twice", name)
		}
		seen[name] = true
		names = append(names, name)
	}
	return names, nil
}

func selectFID(sim online.Simulation, f selectFlags, rules []online.FIDRule, pools []*mat.Dense) (*online.Result, error) {
	var ref *online.FIDReference
	var dim int
	stats := isStatsFile(f.ref, f.refKey)
	if stats {
		s, err := frechet.ReadStats(f.ref)
		if err != nil {
			return nil, err
		}
		dim = s.Dim()
		if ref, err = online.NewFIDReference(s); err != nil {
			return nil, statsFault(f.ref, err)
		}
	} else {
		x, err := readFeatures(f.ref, rowsOpt{key: f.refKey, keyFlag: "--ref-key", stats: true})
		if err != nil {
			return nil, err
		}
		dim = x.RawMatrix().Cols
		if ref, err = online.FIDReferenceFromRows(x); err != nil {
			return nil, err
		}
	}
	if c := pools[0].RawMatrix().Cols; c != dim {
		return nil, &dataio.InputError{File: f.pools[0], Msg: fmt.Sprintf("%d columns, the reference %s has %d", c, f.ref, dim)}
	}
	p := online.DefaultFIDParams()
	p.Delta, p.BonusScale = f.delta, f.bonusScale
	res, err := sim.RunFID(ref, pools, rules, p)
	if err != nil && stats {
		return nil, statsFault(f.ref, err)
	}
	return res, err
}

// statsFault turns an error that says a covariance is not positive
// semidefinite into an input error about the statistics file it came
// from (pools are rows, whose covariances are); other errors pass.
func statsFault(file string, err error) error {
	if !errors.Is(err, frechet.ErrNotPSD) {
		return err
	}
	// Drop the package and argument prefixes ("frechet: first
	// statistics: ", "online: reference: "): the file is named instead.
	msg := err.Error()
	if i := strings.Index(msg, frechet.ErrNotPSD.Error()); i >= 0 {
		msg = msg[i:]
	}
	return &dataio.InputError{File: file, Key: "sigma", Msg: msg, Err: err}
}

func selectIS(sim online.Simulation, f selectFlags, rules []online.ISRule, pools []*mat.Dense) (*online.Result, error) {
	if k := pools[0].RawMatrix().Cols; k < 2 {
		return nil, &dataio.InputError{File: f.pools[0], Msg: fmt.Sprintf("rows have %d class (column); IS-based selection needs at least 2 classes", k)}
	}
	for g, x := range pools {
		if err := checkProbs(f.pools[g], x, f.tol); err != nil {
			return nil, err
		}
	}
	p := online.DefaultISParams()
	p.Delta, p.BonusScale = f.delta, f.bonusScale
	return sim.RunIS(pools, rules, p)
}

func colField(c int) string {
	if c <= 0 {
		return ""
	}
	return "column " + strconv.Itoa(c)
}

// selectOutputs are the files 'select --out' writes.
var selectOutputs = []string{"steps.csv", "regret.png", "optimal_pick_ratio.png", "select.json"}

func writeSelectArtifacts(dir string, res *online.Result, out *selectOutput) error {
	if dir == "" {
		return nil
	}
	if err := prepareOut(dir); err != nil {
		return err
	}
	header := []string{"step"}
	for _, a := range res.Algorithms {
		for _, m := range []string{"regret", "average_regret", "optimal_pick_ratio"} {
			header = append(header, a.Name+"_"+m+"_mean", a.Name+"_"+m+"_std")
		}
	}
	rows := make([][]float64, res.Steps)
	xs := make([]float64, res.Steps)
	for t := range rows {
		xs[t] = float64(t + 1)
		rows[t] = []float64{float64(t + 1)}
		for _, a := range res.Algorithms {
			for _, c := range []online.Curve{a.Regret, a.AverageRegret, a.OptimalPickRatio} {
				rows[t] = append(rows[t], c.Mean[t], c.Std[t])
			}
		}
	}
	if err := dataio.WriteCSV(outPath(dir, "steps.csv"), header, rows); err != nil {
		return err
	}
	band := func(c online.Curve) ([]float64, []float64) {
		lo, hi := make([]float64, len(c.Mean)), make([]float64, len(c.Mean))
		for i := range c.Mean {
			lo[i], hi[i] = c.Mean[i]-c.Std[i], c.Mean[i]+c.Std[i]
		}
		return lo, hi
	}
	var regret, ratio []chart.Series
	for _, a := range res.Algorithms {
		lo, hi := band(a.Regret)
		regret = append(regret, chart.Series{Name: a.Name, X: xs, Y: a.Regret.Mean, Lower: lo, Upper: hi})
		lo, hi = band(a.OptimalPickRatio)
		ratio = append(ratio, chart.Series{Name: a.Name, X: xs, Y: a.OptimalPickRatio.Mean, Lower: lo, Upper: hi})
	}
	what := strings.ToUpper(res.Metric)
	if err := chart.Lines(outPath(dir, "regret.png"), "Regret ("+what+"), mean ± std over trials", "step", "regret", regret); err != nil {
		return err
	}
	if err := chart.Lines(outPath(dir, "optimal_pick_ratio.png"), "Optimal-pick ratio ("+what+")", "step", "fraction of steps on the best generator", ratio); err != nil {
		return err
	}
	return dataio.WriteJSON(outPath(dir, "select.json"), out)
}

func printSelect(w io.Writer, pools []string, o *selectOutput) {
	fmt.Fprintf(w, "%d generators, %s; best on its whole pool: %d (%s, %s = %s)\n", len(pools), strings.ToUpper(o.Score), o.Best, pools[o.Best], o.Score, fmtNum(float64(o.Scores[o.Best])))
	fmt.Fprintf(w, "%d trials x %d steps x batch %d\n\n", o.Trials, o.Steps, o.Batch)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "algorithm\tfinal regret\toptimal-pick ratio\tpicks of the best\t")
	for _, name := range o.order {
		a := o.Algorithms[name]
		fmt.Fprintf(tw, "%s\t%s ± %s\t%.3f ± %.3f\t%.0f of %d\t\n", name, fmtNum(float64(a.RegretFinal.Mean)), fmtNum(float64(a.RegretFinal.Std)),
			float64(a.OptimalPickRatioFinal.Mean), float64(a.OptimalPickRatioFinal.Std), a.Picks[o.Best], o.Steps)
	}
	tw.Flush()
}

// demoSelect runs the online selection on a family like the seed's
// truncation experiment: generators whose covariance is the reference's
// scaled by a factor from 0.05 to 1, so the most diverse one is best while
// the collapsed ones look deceptively good on few samples.
func demoSelect(w io.Writer, dir string, r *rand.Rand) (report.Section, error) {
	const d, G, poolRows, steps, batch, trials = 16, 8, 1000, 500, 5, 8
	gauss := func(n int, scale float64) *mat.Dense {
		x := mat.NewDense(n, d, nil)
		raw := x.RawMatrix().Data
		for i := range raw {
			raw[i] = scale * r.NormFloat64()
		}
		return x
	}
	ref, err := online.FIDReferenceFromRows(gauss(4000, 1))
	if err != nil {
		return report.Section{}, err
	}
	pools := make([]*mat.Dense, G)
	scales := make([]float64, G)
	for g := range pools {
		scales[g] = 0.05 + 0.95*float64(g)/float64(G-1)
		pools[g] = gauss(poolRows, math.Sqrt(scales[g]))
	}
	sim := online.Simulation{Steps: steps, Batch: batch, Trials: trials, Seed: r.Uint64()}
	res, err := sim.RunFID(ref, pools, []online.FIDRule{online.FIDUCB, online.FIDNaiveUCB, online.FIDGreedy}, online.DefaultFIDParams())
	if err != nil {
		return report.Section{}, err
	}
	table := report.Table{Caption: fmt.Sprintf("%d trials of %d steps, batch %d; best generator: covariance scale %.1f (FID %.3f on its pool)", trials, steps, batch, scales[res.Best], res.Scores[res.Best]),
		Header: []string{"algorithm", "final regret", "optimal-pick ratio"}}
	xs := make([]float64, steps)
	for t := range xs {
		xs[t] = float64(t + 1)
	}
	var series []chart.Series
	fmt.Fprintf(w, "online selection among %d generators (FID, covariance scale 0.05..1, best %.2f):\n", G, scales[res.Best])
	for _, a := range res.Algorithms {
		table.Rows = append(table.Rows, []string{a.Name, fmt.Sprintf("%.2f ± %.2f", a.FinalRegret.Mean, a.FinalRegret.Std), fmt.Sprintf("%.3f ± %.3f", a.FinalOptimalPickRatio.Mean, a.FinalOptimalPickRatio.Std)})
		series = append(series, chart.Series{Name: a.Name, X: xs, Y: a.OptimalPickRatio.Mean})
		fmt.Fprintf(w, "   %-10s regret %7.2f  optimal-pick ratio %.3f\n", a.Name, a.FinalRegret.Mean, a.FinalOptimalPickRatio.Mean)
	}
	if err := chart.Lines(outPath(dir, "online_selection.png"), "Optimal-pick ratio, FID-based selection", "step", "fraction of steps on the best generator", series); err != nil {
		return report.Section{}, err
	}
	return report.Section{
		Title: "Online selection of the best generator (FID-UCB)",
		Text: []string{
			fmt.Sprintf("%d Gaussian generators in d = %d differ only in how much of the reference's variance they cover (scale 0.05 to 1, like the seed's truncation experiment). With a budget of %d draws of %d samples, each algorithm picks a generator per step (seed 001, Protocol 1). Greedy trusts the empirical FID, which on few samples flatters the collapsed generators; FID-UCB subtracts a confidence bonus (Algorithm 1) and keeps exploring until the evidence is in.", G, d, steps, batch),
			"On your data: genlens select --score fid --ref real.npy --pools g1.npy g2.npy ... --out sel/",
		},
		Tables: []report.Table{table},
		Images: []report.Image{{File: "online_selection.png", Caption: "Fraction of steps spent on the best generator, mean over trials."}},
	}, nil
}
