package msejob

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"testing/fstest"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/internal/shareddata"
	"github.com/genlens/genlens/job"
)

// supportTally counts, over chunks of many draws, what the done-when
// figures of the monitoring guide (docs/monitoring-support.md) need.
type supportTally struct {
	iid, iidFlagged, iidCovered     int // chunks drawn like the reference
	bad, badFlagged                 int // chunks whose estimate is off by more than 40%
	inSupport, inCovered            int // chunks not extrapolating, with the interval holding the realised MSE
	shift08, shift08Drift           int // synthetic chunks shifted by 0.8 sd
	shifted, shiftedFlagged, alerts int
	relErr                          []float64
}

func (t *supportTally) add(c Chunk, iid, shift08 bool) {
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
	}
	if math.Abs(est/real-1) > 0.4 {
		t.bad++
		t.badFlagged += b2i(flagged)
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
	b.Logf("%s: off>40%% flagged %s; iid flagged %s, iid MSE alerts %s, iid interval holds %s; in-support interval holds %s; shifted flagged %s; drift at 0.8 sd %s; median |est/real-1| %.2f",
		name, pct(t.badFlagged, t.bad), pct(t.iidFlagged, t.iid), pct(t.alerts, t.iid), pct(t.iidCovered, t.iid), pct(t.inCovered, t.inSupport),
		pct(t.shiftedFlagged, t.shifted), pct(t.shift08Drift, t.shift08), t.relErr[len(t.relErr)/2])
}

// supportRun fits a check model (mse fit's defaults) on ref.csv and
// estimates prod.csv with its target in chunks of size rows.
func supportRun(b *testing.B, fsys fstest.MapFS, size int, seed uint64) *EstimateResult {
	req := NewFitRequest()
	req.Train, req.Target, req.Prediction, req.Model, req.Seed = "ref.csv", "y", "y_pred", "check.json", seed
	fit, err := Fit(context.Background(), job.Env{FS: fsys}, req)
	if err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	if err := fit.WriteModel(&buf); err != nil {
		b.Fatal(err)
	}
	fsys["check.json"] = &fstest.MapFile{Data: buf.Bytes()}
	est := NewEstimateRequest()
	est.Model, est.Data, est.ChunkSize, est.Target = "check.json", "prod.csv", size, "y"
	res, err := Estimate(context.Background(), job.Env{FS: fsys}, est)
	if err != nil {
		b.Fatal(err)
	}
	return res
}

// BenchmarkMSEMonitorSupport measures the monitor's signals on shifted
// data, with mse fit's default check model:
//
//   - synthetic: the heteroscedastic case of the guide: 800 reference
//     rows of x0, x1 ~ N(0, 1), y = 2 x0 + sin(3 x1) + (0.3 + 0.5|x0|) ε,
//     the deployed model off by 0.3 x0; production chunks of 500 rows
//     whose features are shifted by 0, 0.4, 0.8 and 1.2 sd, 2 chunks of
//     each per draw;
//   - each LIBSVM set of regression/ sorted by one feature (a different
//     one per draw): 1,000 reference rows at random from the lower 70%,
//     the deployed model least squares on them; production is the other
//     lower-70% rows shuffled (iid chunks) and the top 30% in the
//     feature's order (shifted chunks), chunks of 250.
//
// Run with
//
//	GENLENS_SHARED_DATA=/work/shared/data go test ./job/msejob -run '^$' -bench MSEMonitorSupport -benchtime 1x -v -timeout 60m
func BenchmarkMSEMonitorSupport(b *testing.B) {
	const draws = 6
	b.Run("synthetic", func(b *testing.B) {
		for b.Loop() {
			var t supportTally
			for seed := uint64(1); seed <= draws; seed++ {
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
				for _, c := range supportRun(b, fsys, 500, seed).Chunks {
					t.add(c, shifts[c.Index] == 0, shifts[c.Index] == 0.8)
				}
			}
			t.report(b, "synthetic")
		}
	})
	for _, name := range []string{"abalone_scale", "cpusmall_scale", "space_ga_scale", "cadata"} {
		b.Run(name, func(b *testing.B) {
			_, a, err := dataio.ReadCSV(shareddata.Path(b, "regression/"+name+".csv"))
			if err != nil {
				b.Fatal(err)
			}
			n, d := a.Shape[0], a.Shape[1]-1
			scale := 1.0
			if name == "cadata" {
				scale = 1e5
			}
			row := func(i int) []float64 { return a.Data[i*(d+1) : (i+1)*(d+1)] }
			for b.Loop() {
				var t supportTally
				for seed := uint64(1); seed <= draws; seed++ {
					r := rand.New(rand.NewPCG(seed, 34))
					feat := 1 + int(seed-1)%d
					order := make([]int, n)
					for i := range order {
						order[i] = i
					}
					slices.SortStableFunc(order, func(p, q int) int { return cmpFloat(row(p)[feat], row(q)[feat]) })
					cut := n * 7 / 10
					low := slices.Clone(order[:cut])
					r.Shuffle(len(low), func(i, j int) { low[i], low[j] = low[j], low[i] })
					const nref, size = 1000, 250
					ref := low[:nref]
					iid := low[nref:]
					iid = iid[:len(iid)/size*size]
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
					table := func(rows []int) []byte {
						var buf bytes.Buffer
						buf.WriteString("y")
						for j := range d {
							fmt.Fprintf(&buf, ",f%d", j)
						}
						buf.WriteString(",y_pred\n")
						for _, i := range rows {
							f := w.AtVec(0)
							fmt.Fprintf(&buf, "%v", row(i)[0]/scale)
							for j, v := range row(i)[1:] {
								f += w.AtVec(j+1) * v
								fmt.Fprintf(&buf, ",%v", v)
							}
							fmt.Fprintf(&buf, ",%v\n", f)
						}
						return buf.Bytes()
					}
					fsys := fstest.MapFS{"ref.csv": {Data: table(ref)}, "prod.csv": {Data: table(prod)}}
					for _, c := range supportRun(b, fsys, size, seed).Chunks {
						if c.Rows == size {
							t.add(c, c.End <= len(iid), false)
						}
					}
				}
				t.report(b, name)
			}
		})
	}
}
