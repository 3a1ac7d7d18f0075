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
	"github.com/genlens/genlens/internal/testkit/shareddata"
	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/metric/monitor"
)

// extrapolationRun fits a check model on ref.csv and estimates prod.csv
// in chunks of size rows, returning the chunks. Extrapolation and drift
// depend on the features only, so a short fit (20 epochs) serves.
func extrapolationRun(b *testing.B, fsys fstest.MapFS, size int) *EstimateResult {
	req := NewFitRequest()
	req.Train, req.Target, req.Prediction, req.Model, req.Epochs, req.Folds = "ref.csv", "y", "y_pred", "check.json", 20, 0
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
	est.Model, est.Data, est.ChunkSize = "check.json", "prod.csv", size
	res, err := Estimate(context.Background(), job.Env{FS: fsys}, est)
	if err != nil {
		b.Fatal(err)
	}
	return res
}

// extrapolationTally counts extrapolating chunks and sums the largest
// per-feature KS statistic of the complete chunks, by whether they are
// shifted.
type extrapolationTally struct{ in, inFired, out, outFired, inKS, outKS, inRecon, outRecon float64 }

func (t *extrapolationTally) add(c monitor.ChunkView, shifted bool) {
	ks := 0.0
	for _, f := range c.Features {
		ks = math.Max(ks, float64(f.KS))
	}
	fired := 0.0
	if c.Extrapolating {
		fired = 1
	}
	if shifted {
		t.out, t.outFired, t.outKS, t.outRecon = t.out+1, t.outFired+fired, t.outKS+ks, t.outRecon+float64(c.ReconstructionError)
	} else {
		t.in, t.inFired, t.inKS, t.inRecon = t.in+1, t.inFired+fired, t.inKS+ks, t.inRecon+float64(c.ReconstructionError)
	}
}

func (t *extrapolationTally) report(b *testing.B, name string) {
	b.Logf("%s: extrapolating in %.0f of %.0f in-support chunks (%.1f%%) and %.0f of %.0f shifted chunks (%.1f%%); mean max KS %.3f vs %.3f; mean reconstruction error %.3f vs %.3f",
		name, t.inFired, t.in, 100*t.inFired/t.in, t.outFired, t.out, 100*t.outFired/t.out, t.inKS/t.in, t.outKS/t.out, t.inRecon/t.in, t.outRecon/t.out)
}

// BenchmarkMSEExtrapolation measures how often `extrapolating` fires
// (default --max-out-of-reference 0.05) on chunks inside the reference's
// support and on shifted ones:
//
//   - readme: the README's serve tour, 20 draws: 500 reference rows of
//     x0, x1 ~ N(0, 1), 600 production rows in chunks of 100, x0 shifted
//     by 2 from row 300 (chunks 0-2 in support, 3-5 shifted);
//   - cadata: rows sorted by median income; 6,000 random reference rows
//     from the lower 70%, the other rows in income order in chunks of
//     500 (chunks wholly from the lower 70% in support, those wholly
//     from the top 30% shifted, the one straddling the cut skipped).
//
// Run with
//
//	GENLENS_SHARED_DATA=/work/shared/data go test ./job/msejob -run '^$' -bench MSEExtrapolation -benchtime 1x -v
func BenchmarkMSEExtrapolation(b *testing.B) {
	b.Run("readme", func(b *testing.B) {
		for b.Loop() {
			var t extrapolationTally
			for seed := uint64(1); seed <= 20; seed++ {
				r := rand.New(rand.NewPCG(seed, 21))
				table := func(n int, shiftFrom int) []byte {
					var buf bytes.Buffer
					buf.WriteString("x0,x1,y_pred,y\n")
					for i := range n {
						x0, x1 := r.NormFloat64(), r.NormFloat64()
						if i >= shiftFrom {
							x0 += 2
						}
						m := 2*x0 + math.Sin(3*x1)
						fmt.Fprintf(&buf, "%v,%v,%v,%v\n", x0, x1, m+0.2*x0, m+0.4*(1+x0*x0)*r.NormFloat64())
					}
					return buf.Bytes()
				}
				fsys := fstest.MapFS{"ref.csv": {Data: table(500, 500)}, "prod.csv": {Data: table(600, 300)}}
				for _, c := range extrapolationRun(b, fsys, 100).Chunks {
					t.add(c, c.Index >= 3)
				}
			}
			t.report(b, "readme")
		}
	})
	b.Run("cadata", func(b *testing.B) {
		_, a, err := dataio.ReadCSV(shareddata.Path(b, "regression/cadata.csv"))
		if err != nil {
			b.Fatal(err)
		}
		n, d := a.Shape[0], a.Shape[1]-1
		row := func(i int) []float64 { return a.Data[i*(d+1) : (i+1)*(d+1)] }
		order := make([]int, n)
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(p, q int) int { return cmpFloat(row(p)[1], row(q)[1]) })
		cut := n * 7 / 10
		perm := rand.New(rand.NewPCG(3, 21)).Perm(cut)
		const nref = 6000
		isRef := make([]bool, n)
		var ref, prod []int
		for _, k := range perm[:nref] {
			isRef[k] = true
		}
		for k, i := range order {
			if isRef[k] {
				ref = append(ref, i)
			} else {
				prod = append(prod, i)
			}
		}
		// The deployed model: least squares with an intercept on the
		// reference rows.
		X := mat.NewDense(nref, d+1, nil)
		y := mat.NewVecDense(nref, nil)
		for k, i := range ref {
			X.Set(k, 0, 1)
			for j := range d {
				X.Set(k, j+1, row(i)[j+1])
			}
			y.SetVec(k, row(i)[0]/1e5)
		}
		var w mat.VecDense
		if err := w.SolveVec(X, y); err != nil {
			b.Fatal(err)
		}
		table := func(rows []int) []byte {
			var buf bytes.Buffer
			buf.WriteString("y,income,age,rooms,bedrooms,population,households,lat,lon,y_pred\n")
			for _, i := range rows {
				f := w.AtVec(0)
				fmt.Fprintf(&buf, "%v", row(i)[0]/1e5)
				for j, v := range row(i)[1:] {
					f += w.AtVec(j+1) * v
					fmt.Fprintf(&buf, ",%v", v)
				}
				fmt.Fprintf(&buf, ",%v\n", f)
			}
			return buf.Bytes()
		}
		fsys := fstest.MapFS{"ref.csv": {Data: table(ref)}, "prod.csv": {Data: table(prod)}}
		inSupport := cut - nref // production rows from the lower 70%
		for b.Loop() {
			var t extrapolationTally
			for _, c := range extrapolationRun(b, fsys, 500).Chunks {
				switch {
				case c.End <= inSupport:
					t.add(c, false)
				case c.Start >= inSupport && c.Rows == 500:
					t.add(c, true)
				}
			}
			t.report(b, "cadata")
		}
	})
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
