package demo

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"path/filepath"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/internal/report"
	"github.com/genlens/genlens/internal/report/chart"
	"github.com/genlens/genlens/metric/frechet"
	"github.com/genlens/genlens/metric/manifold"
)

// fidGenerator is one simulated generator of the FID section: Gaussian
// features whose covariance is the reference's times scale and whose
// mean is moved by shift along the first axis, so that its Fréchet
// distance to the reference is known in closed form.
type fidGenerator struct {
	name         string
	scale, shift float64
}

// exact is the Fréchet distance between N(shift·e1, scale·Σ) and N(0, Σ):
// shift² + Tr Σ (1 − √scale)², Σ diagonal with trace tr.
func (g fidGenerator) exact(tr float64) float64 {
	s := 1 - math.Sqrt(g.scale)
	return g.shift*g.shift + tr*s*s
}

// fidSection computes FID, KID and precision/recall, the two-sample
// metrics of `genlens compare`, on synthetic features whose true Fréchet
// distance is known: a faithful generator, a collapsed one (a quarter of
// the variance), an over-dispersed one and one with a shifted mean. The
// features stand in for an embedder's (Inception-v3's pool3 on images),
// so that the section needs no network weights.
func fidSection(ctx context.Context, w io.Writer, dir string, r *rand.Rand) (report.Section, error) {
	const d, n = 32, 4000
	const shown = 1000 // rows per side in the table
	sd := make([]float64, d)
	tr := 0.0
	for j := range sd {
		v := 1 / float64(j+1) // a few strong directions and a long tail, as image features have
		sd[j], tr = math.Sqrt(v), tr+v
	}
	draw := func(scale, shift float64) *mat.Dense {
		x := mat.NewDense(n, d, nil)
		for i := 0; i < n; i++ {
			row := x.RawRowView(i)
			for j := range row {
				row[j] = math.Sqrt(scale) * sd[j] * r.NormFloat64()
			}
			row[0] += shift
		}
		return x
	}
	gens := []fidGenerator{
		{"faithful", 1, 0},
		{"collapsed (1/4 of the variance)", 0.25, 0},
		{"over-dispersed (2x the variance)", 2, 0},
		{"shifted mean", 1, 1},
	}
	real := draw(1, 0)
	sizes := []int{250, 500, 1000, 2000, 4000}
	table := report.Table{
		Caption: fmt.Sprintf("%d-dimensional Gaussian features, %d rows a side (KID: 20 subsets of 500, x 1000)", d, shown),
		Header:  []string{"generator", "true Fréchet distance", "FID", "KID x 1000", "precision", "recall"},
	}
	var series []chart.Series
	fmt.Fprintf(w, "FID / KID / precision-recall of %d generators against %d reference rows (d = %d):\n", len(gens), shown, d)
	for _, g := range gens {
		fake := draw(g.scale, g.shift)
		s := chart.Series{Name: g.name}
		var fid float64
		for _, m := range sizes {
			v, err := frechet.Distance(frechet.StatsOf(real.Slice(0, m, 0, d).(*mat.Dense), 1), frechet.StatsOf(fake.Slice(0, m, 0, d).(*mat.Dense), 1))
			if err != nil {
				return report.Section{}, err
			}
			s.X, s.Y = append(s.X, float64(m)), append(s.Y, v)
			if m == shown {
				fid = v
			}
		}
		series = append(series, s)
		x, y := real.Slice(0, shown, 0, d).(*mat.Dense), fake.Slice(0, shown, 0, d).(*mat.Dense)
		kid, kidStd, err := frechet.KID(ctx, x, y, 20, 500, 1)
		if err != nil {
			return report.Section{}, err
		}
		pr, err := manifold.Compute(ctx, x, y, manifold.DefaultK)
		if err != nil {
			return report.Section{}, err
		}
		table.Rows = append(table.Rows, []string{g.name, fmt.Sprintf("%.3f", g.exact(tr)), fmt.Sprintf("%.3f", fid),
			fmt.Sprintf("%.2f ± %.2f", 1000*kid, 1000*kidStd), fmt.Sprintf("%.3f", pr.Precision), fmt.Sprintf("%.3f", pr.Recall)})
		fmt.Fprintf(w, "   %-34s FID %6.3f (true %.3f)  KID %7.4f  precision %.3f  recall %.3f\n", g.name, fid, g.exact(tr), kid, pr.Precision, pr.Recall)
	}
	if err := chart.LinesLog2(filepath.Join(dir, "fid_samples.png"), "FID against the number of samples per side", "samples per side", "FID", series); err != nil {
		return report.Section{}, err
	}
	return report.Section{
		Title: "FID, KID and precision/recall of generated features",
		Text: []string{
			fmt.Sprintf("Four generators produce %d-dimensional Gaussian features, standing in for an embedder's features of their images: one faithful to the reference, one collapsed to a quarter of its variance (mode collapse), one over-dispersed, one with its mean moved. Their Fréchet distance to the reference is known in closed form, ‖μ − μ_r‖² + Tr Σ_r (1 − √s)², so the FID computed from samples (Heusel et al.) can be checked against it.", d),
			"FID ranks the generators but folds every failure into one number, and from samples it is biased upwards: the faithful generator's true distance is 0, and its FID shrinks only as the samples grow (the chart). KID is unbiased and near 0 for it. Precision and recall say which way a generator fails: the collapsed one keeps its precision and loses recall, the over-dispersed one the reverse.",
			"On your images (Inception-v3 features as pytorch-fid computes them, or a feature file):",
		},
		Commands: []string{
			"genlens compare --real real_imgs/ --fake gen_imgs/",
			"genlens compare --real real.npy --fake fake.npy --metrics fid,kid,prdc --json",
		},
		Tables: []report.Table{table},
		Images: []report.Image{{File: "fid_samples.png", Caption: "FID from samples against the number of samples per side; the true distances are those of the table."}},
	}, nil
}
