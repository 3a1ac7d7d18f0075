package msejob

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"testing/fstest"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/internal/format/jsonnum"
	"github.com/genlens/genlens/internal/testkit/shareddata"
	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/metric/monitor"
)

// supportTally counts, over chunks of many draws, what the figures of
// the monitor's goals in its guide (docs/monitoring-support.md) need.
type supportTally struct {
	iid, iidFlagged, iidCovered     int // chunks drawn like the reference
	bad, badFlagged                 int // chunks whose estimate is off by more than 40%
	inSupport, inCovered            int // chunks not extrapolating, with the interval holding the realised MSE
	shift08, shift08Drift           int // synthetic chunks shifted by 0.8 sd
	shifted, shiftedFlagged, alerts int
	shiftedAlerts                   int
	relErr                          []float64
	// Off by more than 40% against the pooled realised MSE of the draw's
	// iid rows (what the estimate of an iid chunk targets) instead of the
	// chunk's own: iidBadOwn and iidBadPooled count iid chunks off by
	// either reading, pooledBad every chunk off with iid chunks read
	// against the pooled MSE (shifted ones against their own).
	iidBadOwn, iidBadOwnFlagged       int
	iidBadPooled, iidBadPooledFlagged int
	pooledBad, pooledBadFlagged       int
	// refOverPooled and estOverPooled are, per draw, the reference's
	// realised MSE (which calibrates the check model) and the mean of the
	// iid chunks' estimates over the pooled realised MSE of the iid rows.
	refOverPooled, estOverPooled []float64
}

// add tallies chunk c; pooled is the draw's pooled realised MSE over its
// iid rows for an iid chunk of a LIBSVM set, NaN otherwise.
func (t *supportTally) add(c monitor.ChunkView, iid, shift08 bool, pooled float64) {
	est, real := float64(c.EstimatedMSE), float64(c.RealizedMSE)
	flagged := c.DriftView != nil && (c.Extrapolating || c.DriftAlert)
	covered := float64(c.EstimateLower) <= real && real <= float64(c.EstimateUpper)
	if iid {
		t.iid++
		t.iidFlagged += b2i(flagged)
		t.iidCovered += b2i(covered)
		t.alerts += b2i(c.Alert)
	} else {
		t.shifted++
		t.shiftedFlagged += b2i(flagged)
		t.shiftedAlerts += b2i(c.Alert)
	}
	if math.Abs(est/real-1) > 0.4 {
		t.bad++
		t.badFlagged += b2i(flagged)
		if iid {
			t.iidBadOwn++
			t.iidBadOwnFlagged += b2i(flagged)
		}
	}
	if !math.IsNaN(pooled) {
		target := real
		if iid {
			target = pooled
		}
		if off := math.Abs(est/target-1) > 0.4; off {
			t.pooledBad++
			t.pooledBadFlagged += b2i(flagged)
			if iid {
				t.iidBadPooled++
				t.iidBadPooledFlagged += b2i(flagged)
			}
		}
	}
	if c.DriftView != nil && !c.Extrapolating {
		t.inSupport++
		t.inCovered += b2i(covered)
	}
	if shift08 {
		t.shift08++
		t.shift08Drift += b2i(c.DriftAlert)
	}
	t.relErr = append(t.relErr, math.Abs(est/real-1))
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func pct(a, b int) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%d/%d (%.1f%%)", a, b, 100*float64(a)/float64(b))
}

func (t *supportTally) report(b *testing.B, name string) {
	slices.Sort(t.relErr)
	b.Logf("%s: off>40%% flagged %s; iid flagged %s, iid MSE alerts %s, shifted MSE alerts %s, iid interval holds %s; in-support interval holds %s; shifted flagged %s; drift at 0.8 sd %s; median |est/real-1| %.2f",
		name, pct(t.badFlagged, t.bad), pct(t.iidFlagged, t.iid), pct(t.alerts, t.iid), pct(t.shiftedAlerts, t.shifted), pct(t.iidCovered, t.iid), pct(t.inCovered, t.inSupport),
		pct(t.shiftedFlagged, t.shifted), pct(t.shift08Drift, t.shift08), t.relErr[len(t.relErr)/2])
	if t.pooledBad+t.iidBadOwn > 0 {
		b.Logf("%s: iid chunks off>40%% against their own realised MSE %d/%d, flagged %s; against the draw's pooled realised MSE %d/%d, flagged %s; off>40%% flagged with iid chunks read against the pooled MSE %s",
			name, t.iidBadOwn, t.iid, pct(t.iidBadOwnFlagged, t.iidBadOwn), t.iidBadPooled, t.iid, pct(t.iidBadPooledFlagged, t.iidBadPooled), pct(t.pooledBadFlagged, t.pooledBad))
	}
	if len(t.refOverPooled) > 0 {
		b.Logf("%s: per draw, reference realised MSE / pooled iid realised MSE %.2f; mean iid estimate / pooled %.2f", name, t.refOverPooled, t.estOverPooled)
	}
}

// supportRun fits a check model (mse fit's defaults, or objective) on ref.csv and
// estimates prod.csv with its target in chunks of size rows. With
// GENLENS_BENCH_CACHE set to a directory, the fitted model is kept there
// under a digest of the reference rows and the seed, so that a second run
// (of changed monitoring code) measures the same check models without
// training them again.
func supportRun(b *testing.B, fsys fstest.MapFS, size int, seed uint64, objective string) *EstimateResult {
	req := NewFitRequest()
	req.Train, req.Target, req.Prediction, req.Model, req.Seed = "ref.csv", "y", "y_pred", "check.json", seed
	if objective != "" {
		req.Objective = objective
	}
	var cached string
	if dir := os.Getenv("GENLENS_BENCH_CACHE"); dir != "" {
		h := sha256.New()
		h.Write(fsys["ref.csv"].Data)
		fmt.Fprintf(h, "%+v", req)
		cached = filepath.Join(dir, fmt.Sprintf("check-%x.json", h.Sum(nil)[:12]))
	}
	if data, err := os.ReadFile(cached); cached != "" && err == nil {
		fsys["check.json"] = &fstest.MapFile{Data: data}
	} else {
		fit, err := Fit(context.Background(), job.Env{FS: fsys}, req)
		if err != nil {
			b.Fatal(err)
		}
		var buf bytes.Buffer
		if err := fit.WriteModel(&buf); err != nil {
			b.Fatal(err)
		}
		fsys["check.json"] = &fstest.MapFile{Data: buf.Bytes()}
		if cached != "" {
			if err := os.WriteFile(cached, buf.Bytes(), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	est := NewEstimateRequest()
	est.Model, est.Data, est.ChunkSize, est.Target = "check.json", "prod.csv", size, "y"
	res, err := Estimate(context.Background(), job.Env{FS: fsys}, est)
	if err != nil {
		b.Fatal(err)
	}
	return res
}

// groupTally summarises chunks of one kind (a shift, iid or shifted)
// over draws: one row of the guide's table of the monitor.
type groupTally struct {
	chunks, extrapolating, drift, covered, alerts int
	ratio, thin                                   []float64
}

// groups keeps the tallies of a set by group label, in first-seen order.
// With GENLENS_BENCH_OUT set to a file, every chunk is also written there
// as a JSON line.
type groups struct {
	order []string
	by    map[string]*groupTally
	name  string
	draw  uint64
	// lower and upper are the MSE thresholds of the draw, for the JSON lines.
	lower, upper jsonnum.Num
	out          *json.Encoder
	// weights compares importance-weighted estimates, by label.
	weights map[string]*weightTally
}

func newGroups(b *testing.B, name string) *groups {
	g := &groups{name: name}
	if p := os.Getenv("GENLENS_BENCH_OUT"); p != "" {
		f, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { f.Close() })
		g.out = json.NewEncoder(f)
	}
	return g
}

func (g *groups) add(label string, c monitor.ChunkView) {
	if g.out != nil {
		if err := g.out.Encode(map[string]any{"set": g.name, "draw": g.draw, "group": label, "estimate": c.EstimatedMSE,
			"realised": c.RealizedMSE, "lower": c.EstimateLower, "upper": c.EstimateUpper, "extrapolating": c.DriftView != nil && c.Extrapolating,
			"drift": c.DriftView != nil && c.DriftAlert, "thin": c.ThinSupport, "alert": c.Alert, "lower_threshold": g.lower,
			"upper_threshold": g.upper}); err != nil {
			panic(err)
		}
	}
	if g.by == nil {
		g.by = map[string]*groupTally{}
	}
	t := g.by[label]
	if t == nil {
		t = &groupTally{}
		g.by[label] = t
		g.order = append(g.order, label)
	}
	est, real := float64(c.EstimatedMSE), float64(c.RealizedMSE)
	t.chunks++
	t.extrapolating += b2i(c.DriftView != nil && c.Extrapolating)
	t.drift += b2i(c.DriftView != nil && c.DriftAlert)
	t.covered += b2i(float64(c.EstimateLower) <= real && real <= float64(c.EstimateUpper))
	t.alerts += b2i(c.Alert)
	t.ratio = append(t.ratio, est/real)
	if c.DriftView != nil {
		t.thin = append(t.thin, float64(c.ThinSupport))
	}
}

// weigh tallies the importance-weighted estimates of chunk c beside
// the product's.
func (g *groups) weigh(label string, res *EstimateResult, feats [][]float64, c monitor.ChunkView) {
	if g.weights == nil {
		g.weights = map[string]*weightTally{}
	}
	w := g.weights[label]
	if w == nil {
		w = &weightTally{}
		g.weights[label] = w
	}
	direct, recal, ess := weightedEstimates(res, feats[c.Start:c.End], float64(c.EstimatedMSE))
	w.add(float64(c.EstimatedMSE), direct, recal, float64(c.RealizedMSE), ess)
}

func (g *groups) report(b *testing.B, name string) {
	defer func() {
		for _, l := range g.order {
			if w := g.weights[l]; w != nil {
				b.Logf("%s: importance weighting: %s", name, w.line(l))
			}
		}
	}()
	b.Logf("%s: | chunks | estimated / realised MSE (min-median-max) | thin support (min-max) | extrapolating | drift_alert | interval holds realised | MSE alert |", name)
	for _, l := range g.order {
		t := g.by[l]
		slices.Sort(t.ratio)
		slices.Sort(t.thin)
		thin := "-"
		if len(t.thin) > 0 {
			thin = fmt.Sprintf("%.1f-%.1f%%", 100*t.thin[0], 100*t.thin[len(t.thin)-1])
		}
		b.Logf("%s: | %s | %d | %.2f-%.2f-%.2f | %s | %s | %s | %s | %s |", name, l, t.chunks,
			t.ratio[0], t.ratio[len(t.ratio)/2], t.ratio[len(t.ratio)-1], thin,
			pct(t.extrapolating, t.chunks), pct(t.drift, t.chunks), pct(t.covered, t.chunks), pct(t.alerts, t.chunks))
	}
}

// BenchmarkMSEMonitorSupport measures the monitor's signals on shifted
// data, with mse fit's default check model:
//
//   - synthetic: the heteroscedastic case of the guide: 800 reference
//     rows of x0, x1 ~ N(0, 1), y = 2 x0 + sin(3 x1) + (0.3 + 0.5|x0|) ε,
//     the deployed model off by 0.3 x0; production chunks of 500 rows
//     whose features are shifted by 0, 0.4, 0.8 and 1.2 sd, 2 chunks of
//     each per draw; synthetic-l the same with the L objective (--objective l);
//   - each LIBSVM set of regression/ sorted by one feature (a different
//     one per draw): 1,000 reference rows at random from the lower 70%,
//     the deployed model least squares on them; production is the other
//     lower-70% rows shuffled (iid chunks) and the top 30% in the
//     feature's order (shifted chunks), chunks of 250;
//   - cadata-income: cadata sorted by median income, 6,000 reference rows
//     at random from the lower 85%, the deployed model least squares on
//     them; iid chunks of 500 from the other lower-85% rows and shifted
//     chunks of 500 from the top 15% of incomes (6 draws; 12 for the others).
//
// Run with
//
//	GENLENS_SHARED_DATA=/work/shared/data go test ./job/msejob -run '^$' -bench MSEMonitorSupport -benchtime 1x -v -timeout 120m
//
// and GENLENS_BENCH_CACHE=DIR to keep the fitted check models for a
// second run.
func BenchmarkMSEMonitorSupport(b *testing.B) {
	const draws = 12
	for _, objective := range []string{"", "l"} {
		name := "synthetic"
		if objective != "" {
			name += "-" + objective
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				var t supportTally
				g := newGroups(b, name)
				for seed := uint64(1); seed <= draws; seed++ {
					g.draw = seed
					r := rand.New(rand.NewPCG(seed, 33))
					shifts := []float64{0, 0, 0.4, 0.4, 0.8, 0.8, 1.2, 1.2}
					table := func(n, chunk int) []byte {
						var buf bytes.Buffer
						buf.WriteString("x0,x1,y_pred,y\n")
						for i := range n {
							s := 0.0
							if chunk > 0 {
								s = shifts[i/chunk]
							}
							x0, x1 := r.NormFloat64()+s, r.NormFloat64()+s
							m := 2*x0 + math.Sin(3*x1)
							fmt.Fprintf(&buf, "%v,%v,%v,%v\n", x0, x1, m+0.3*x0, m+(0.3+0.5*math.Abs(x0))*r.NormFloat64())
						}
						return buf.Bytes()
					}
					fsys := fstest.MapFS{"ref.csv": {Data: table(800, 0)}, "prod.csv": {Data: table(500*len(shifts), 500)}}
					res := supportRun(b, fsys, 500, seed, objective)
					g.lower, g.upper = res.LowerThreshold, res.UpperThreshold
					feats := prodFeatures(b, fsys, res)
					for _, c := range res.Chunks {
						t.add(c, shifts[c.Index] == 0, shifts[c.Index] == 0.8, math.NaN())
						label := fmt.Sprintf("shift %.1f", shifts[c.Index])
						g.add(label, c)
						g.weigh(label, res, feats, c)
					}
				}
				t.report(b, name)
				g.report(b, name)
			}
		})
	}
	for _, name := range []string{"abalone_scale", "space_ga_scale", "cpusmall_scale", "cadata", "cadata-income"} {
		b.Run(name, func(b *testing.B) {
			p := libsvmProtocol{file: name, nref: 1000, size: 250, cut: 0.7, feature: -1, draws: draws}
			if name == "cadata-income" {
				p = libsvmProtocol{file: "cadata", nref: 6000, size: 500, cut: 0.85, feature: 1, draws: 6}
			}
			for b.Loop() {
				libsvmSupport(b, name, p)
			}
		})
	}
}

// BenchmarkMSEMonitorSupportReference is BenchmarkMSEMonitorSupport's
// LIBSVM protocol on abalone, cpusmall and cadata with larger references: 2,000
// rows, and every lower-70% row but 1,000 (4 iid chunks of 250 per
// draw), to show at which reference size chunks off by more than 40%
// are flagged. Run with
//
//	GENLENS_SHARED_DATA=/work/shared/data GENLENS_BENCH_CACHE=DIR go test ./job/msejob -run '^$' -bench MSEMonitorSupportReference -benchtime 1x -v -timeout 180m
func BenchmarkMSEMonitorSupportReference(b *testing.B) {
	for _, name := range []string{"abalone_scale", "cpusmall_scale", "cadata"} {
		for _, ref := range []string{"2000", "all"} {
			b.Run(name+"/"+ref, func(b *testing.B) {
				p := libsvmProtocol{file: name, nref: 2000, size: 250, cut: 0.7, feature: -1, draws: 12}
				if ref == "all" {
					p.nref, p.iidRows = 0, 1000
				}
				for b.Loop() {
					libsvmSupport(b, name+"/"+ref, p)
				}
			})
		}
	}
}

// libsvmProtocol is a LIBSVM set sorted by one feature: nref reference
// rows at random from the lower cut of the rows (or, with iidRows, every
// lower row but iidRows), iid chunks of size rows from the other lower
// rows, shifted chunks from the rest; feature -1 sorts by another
// feature in each of draws draws.
type libsvmProtocol struct {
	file                string
	nref, size, iidRows int
	cut                 float64
	feature, draws      int
}

// libsvmSupport runs protocol p and reports it as name.
func libsvmSupport(b *testing.B, name string, p libsvmProtocol) {
	_, a, err := dataio.ReadCSV(shareddata.Path(b, "regression/"+p.file+".csv"))
	if err != nil {
		b.Fatal(err)
	}
	n, d := a.Shape[0], a.Shape[1]-1
	scale := 1.0
	if p.file == "cadata" {
		scale = 1e5
	}
	row := func(i int) []float64 { return a.Data[i*(d+1) : (i+1)*(d+1)] }
	var t supportTally
	g := newGroups(b, name)
	for seed := uint64(1); seed <= uint64(p.draws); seed++ {
		g.draw = seed
		r := rand.New(rand.NewPCG(seed, 34))
		feat := p.feature
		if feat < 0 {
			feat = 1 + int(seed-1)%d
		}
		order := make([]int, n)
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(p, q int) int { return cmpFloat(row(p)[feat], row(q)[feat]) })
		cut := int(float64(n) * p.cut)
		low := slices.Clone(order[:cut])
		r.Shuffle(len(low), func(i, j int) { low[i], low[j] = low[j], low[i] })
		nref := p.nref
		if p.iidRows > 0 {
			nref = len(low) - p.iidRows
		}
		ref := low[:nref]
		iid := low[nref:]
		iid = iid[:len(iid)/p.size*p.size]
		prod := append(slices.Clone(iid), order[cut:]...)
		X := mat.NewDense(nref, d+1, nil)
		y := mat.NewVecDense(nref, nil)
		for k, i := range ref {
			X.Set(k, 0, 1)
			for j := range d {
				X.Set(k, j+1, row(i)[j+1])
			}
			y.SetVec(k, row(i)[0]/scale)
		}
		var w mat.VecDense
		if err := w.SolveVec(X, y); err != nil {
			b.Fatal(err)
		}
		predict := func(i int) float64 {
			f := w.AtVec(0)
			for j, v := range row(i)[1:] {
				f += w.AtVec(j+1) * v
			}
			return f
		}
		table := func(rows []int) []byte {
			var buf bytes.Buffer
			buf.WriteString("y")
			for j := range d {
				fmt.Fprintf(&buf, ",f%d", j)
			}
			buf.WriteString(",y_pred\n")
			for _, i := range rows {
				fmt.Fprintf(&buf, "%v", row(i)[0]/scale)
				for _, v := range row(i)[1:] {
					fmt.Fprintf(&buf, ",%v", v)
				}
				fmt.Fprintf(&buf, ",%v\n", predict(i))
			}
			return buf.Bytes()
		}
		// The pooled realised MSE of the draw's iid rows: the expected
		// loss under the reference distribution, which an iid chunk's
		// estimate targets, without the chunk's own sampling noise.
		var pooled float64
		for _, i := range iid {
			e := row(i)[0]/scale - predict(i)
			pooled += e * e
		}
		pooled /= float64(len(iid))
		fsys := fstest.MapFS{"ref.csv": {Data: table(ref)}, "prod.csv": {Data: table(prod)}}
		nshift := (n - cut) / p.size
		res := supportRun(b, fsys, p.size, seed, "")
		g.lower, g.upper = res.LowerThreshold, res.UpperThreshold
		feats := prodFeatures(b, fsys, res)
		var iidEst float64
		var iidChunks int
		for _, c := range res.Chunks {
			if c.Rows != p.size {
				continue
			}
			iidChunk := c.End <= len(iid)
			if iidChunk {
				iidEst += float64(c.EstimatedMSE)
				iidChunks++
			}
			t.add(c, iidChunk, false, pooled)
			label := "shifted, farther half"
			switch k := (c.Start - len(iid)) / p.size; {
			case iidChunk:
				label = "iid"
			case k < nshift/2:
				label = "shifted, nearer half"
			}
			g.add(label, c)
			g.weigh(label, res, feats, c)
		}
		t.refOverPooled = append(t.refOverPooled, res.Check.Reference.RealizedMSE/pooled)
		t.estOverPooled = append(t.estOverPooled, iidEst/float64(iidChunks)/pooled)
	}
	t.report(b, name)
	g.report(b, name)
}
