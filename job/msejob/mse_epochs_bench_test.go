package msejob

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"testing/fstest"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/metric/checkmodel"
)

// syntheticSplit is a synthetic monitoring protocol: the paper's Eq. 19
// with Gaussian noise (its data set a), 2,000 reference rows and 10,000
// production rows, and a deployed model f that is the least-squares cubic
// in x fitted on the reference rows (misspecified, so its squared error
// varies with x as the check model must learn).
func syntheticSplit(b testing.TB) fstest.MapFS {
	rng := rand.New(rand.NewPCG(14, 4))
	const nref, nprod = 2000, 10000
	x, y, err := checkmodel.Synthetic(checkmodel.NoiseA, nref+nprod, rng)
	if err != nil {
		b.Fatal(err)
	}
	X := mat.NewDense(nref, 4, nil)
	for i := range nref {
		v := x.At(i, 0)
		X.SetRow(i, []float64{1, v, v * v, v * v * v})
	}
	var w mat.VecDense
	if err := w.SolveVec(X, mat.NewVecDense(nref, y[:nref])); err != nil {
		b.Fatal(err)
	}
	table := func(from, to int) []byte {
		var buf bytes.Buffer
		buf.WriteString("y,x,y_pred\n")
		for i := from; i < to; i++ {
			v := x.At(i, 0)
			f := w.AtVec(0) + w.AtVec(1)*v + w.AtVec(2)*v*v + w.AtVec(3)*v*v*v
			fmt.Fprintf(&buf, "%v,%v,%v\n", y[i], v, f)
		}
		return buf.Bytes()
	}
	return fstest.MapFS{"ref.csv": {Data: table(0, nref)}, "prod.csv": {Data: table(nref, nref+nprod)}}
}

// BenchmarkMSEEpochSelection compares a fixed 200 epochs with epochs
// chosen by validation (up to 200 and up to 400; mean epochs) on the cadata split of
// cadataSplit and on a synthetic split: it reports the chosen epochs, the
// mean relative errors of the in-sample and production estimates and the
// alerts among the ten production chunks (nothing drifts), over five fit
// seeds (five check models on the same split). Run with
//
//	GENLENS_SHARED_DATA=DIR go test ./job/msejob -run '^$' -bench MSEEpochSelection -benchtime 1x
func BenchmarkMSEEpochSelection(b *testing.B) {
	const seeds = 5
	for _, data := range []struct {
		name  string
		split func(testing.TB) fstest.MapFS
	}{
		{"cadata", func(tb testing.TB) fstest.MapFS { return cadataSplit(tb, false) }},
		{"synthetic-a", syntheticSplit},
	} {
		for _, sel := range []struct {
			name   string
			sel    string
			epochs int
		}{{"fixed200", "fixed", 200}, {"validation200", "validation", 200}, {"validation400", "validation", 400}} {
			b.Run(data.name+"/"+sel.name, func(b *testing.B) {
				fsys := data.split(b)
				for b.Loop() {
					var epochs, inErr, prodErr, alerts, inside, insideAlerts float64
					for seed := uint64(1); seed <= seeds; seed++ {
						req := NewFitRequest()
						req.Train, req.Target, req.Prediction, req.Model = "ref.csv", "y", "y_pred", "check.json"
						req.EpochSelection, req.Epochs, req.Seed = sel.sel, sel.epochs, seed
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
						est.Model, est.Data, est.Target, est.Chunks = "check.json", "prod.csv", "y", 10
						res, err := Estimate(context.Background(), job.Env{FS: fsys}, est)
						if err != nil {
							b.Fatal(err)
						}
						lo, hi := float64(res.LowerThreshold), float64(res.UpperThreshold)
						for _, c := range res.Chunks {
							if r := float64(c.RealizedMSE); r >= lo && r <= hi {
								inside++
								if c.Alert {
									insideAlerts++
								}
							}
						}
						epochs += float64(fit.Epochs) / seeds
						inErr += math.Abs(float64(fit.ReferenceEstimatedMSE)/float64(fit.ReferenceRealizedMSE)-1) / seeds
						prodErr += math.Abs(float64(res.EstimatedMSE)/float64(*res.RealizedMSE)-1) / seeds
						alerts += float64(res.Alerts)
						b.Logf("seed %d: %d epochs, in-sample %.3f, production %.3f, %d alerts", seed, fit.Epochs,
							float64(fit.ReferenceEstimatedMSE)/float64(fit.ReferenceRealizedMSE), float64(res.EstimatedMSE)/float64(*res.RealizedMSE), res.Alerts)
					}
					b.ReportMetric(epochs, "mean-epochs")
					b.ReportMetric(inErr, "in-sample-relerr")
					b.ReportMetric(prodErr, "production-relerr")
					b.ReportMetric(alerts, "alerts")
					b.ReportMetric(inside, "inside")
					b.ReportMetric(insideAlerts, "inside-alerts")
				}
			})
		}
	}
}
