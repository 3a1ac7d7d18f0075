package msejob

import (
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/internal/testkit/shareddata"
	"github.com/genlens/genlens/metric/monitor"
)

// BenchmarkMSEDriftFalseAlarms counts how often chunks drawn like the
// reference raise each extrapolation and drift signal, on every LIBSVM set
// of regression/ with the protocol of BenchmarkMSEMonitorSupport (sorted by
// one feature, a different one per draw; 1,000 reference rows at random
// from the lower 70%, 469 for mg_scale which has fewer; iid chunks of 250 from the other lower-70% rows),
// over many draws. The signals depend on the features only, so no check
// model is trained.
//
//	GENLENS_SHARED_DATA=/work/shared/data go test ./job/msejob -run '^$' -bench MSEDriftFalseAlarms -benchtime 1x -v
func BenchmarkMSEDriftFalseAlarms(b *testing.B) {
	const draws, size, perDraw = 60, 250, 8
	for _, name := range []string{"mg_scale", "space_ga_scale", "abalone_scale", "cpusmall_scale", "cadata"} {
		b.Run(name, func(b *testing.B) {
			_, a, err := dataio.ReadCSV(shareddata.Path(b, "regression/"+name+".csv"))
			if err != nil {
				b.Fatal(err)
			}
			n, d := a.Shape[0], a.Shape[1]-1
			row := func(i int) []float64 { return a.Data[i*(d+1)+1 : (i+1)*(d+1)] }
			names := make([]string, d)
			for j := range names {
				names[j] = string(rune('a' + j))
			}
			for b.Loop() {
				var chunks, recon, ks, thin, ranges, flagged int
				for seed := uint64(1); seed <= draws; seed++ {
					r := rand.New(rand.NewPCG(seed, 35))
					feat := int(seed-1) % d
					order := make([]int, n)
					for i := range order {
						order[i] = i
					}
					slices.SortStableFunc(order, func(p, q int) int { return cmpFloat(row(p)[feat], row(q)[feat]) })
					low := slices.Clone(order[:n*7/10])
					r.Shuffle(len(low), func(i, j int) { low[i], low[j] = low[j], low[i] })
					// mg has 969 rows in its lower 70%: 469 reference rows
					// leave two chunks.
					nref := min(1000, len(low)-2*size)
					x := mat.NewDense(nref, d, nil)
					for k, i := range low[:nref] {
						x.SetRow(k, row(i))
					}
					dm, err := monitor.FitDrift(x, names)
					if err != nil {
						b.Fatal(err)
					}
					iid := low[nref:]
					k := min(perDraw, len(iid)/size)
					features := make([][]float64, k*size)
					for i := range features {
						features[i] = row(iid[i])
					}
					cs, err := monitor.BySize(k*size, size)
					if err != nil {
						b.Fatal(err)
					}
					rep, err := monitor.Run(monitor.Input{Chunks: cs, Estimates: make([]float64, k*size), Reference: make([]float64, nref),
						NonNegative: true, Drift: dm, Features: features})
					if err != nil {
						b.Fatal(err)
					}
					for _, res := range rep.Results {
						c := res.Drift
						chunks++
						recon += b2i(c.ReconstructionAlert)
						ks += b2i(c.KSAlert)
						thin += b2i(c.ThinSupport > c.ThinLimit)
						ranges += b2i(c.OutOfReference > c.RangeLimit)
						flagged += b2i(c.Extrapolating || c.DriftAlert)
					}
				}
				b.Logf("%s: %d iid chunks of %d: reconstruction_alert %s, ks_alert %s, thin support %s, ranges %s; flagged %s",
					name, chunks, size, pct(recon, chunks), pct(ks, chunks), pct(thin, chunks), pct(ranges, chunks), pct(flagged, chunks))
			}
		})
	}
}
