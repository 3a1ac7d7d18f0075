package msejob

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"slices"
	"strconv"
	"testing"
	"testing/fstest"

	"gonum.org/v1/gonum/mat"
)

// weightTally compares, over chunks of one kind, the product's estimate
// with two importance-weighted ones: the reference's realised losses
// weighted by the density ratio of chunk to reference (direct), and the
// product's estimate times the weighted ratio of realised loss to
// held-out estimate over the reference (a local recalibration).
type weightTally struct {
	plain, direct, recal [][2]float64 // |log(est/real)| and est/real off by more than 40%
	ess                  []float64
}

func (t *weightTally) add(est, direct, recal, real, ess float64) {
	score := func(e float64) [2]float64 {
		return [2]float64{math.Abs(math.Log(e / real)), float64(b2i(math.Abs(e/real-1) > 0.4))}
	}
	t.plain = append(t.plain, score(est))
	t.direct = append(t.direct, score(direct))
	t.recal = append(t.recal, score(recal))
	t.ess = append(t.ess, ess)
}

func (t *weightTally) line(label string) string {
	sum := func(v [][2]float64) string {
		l := make([]float64, len(v))
		off := 0.0
		for i, x := range v {
			l[i] = x[0]
			off += x[1]
		}
		slices.Sort(l)
		return fmt.Sprintf("median |log(est/real)| %.3f, off >40%% %d/%d", l[len(l)/2], int(off), len(v))
	}
	ess := slices.Clone(t.ess)
	slices.Sort(ess)
	return fmt.Sprintf("%s: unweighted %s | weighted losses %s | weighted recalibration %s | median effective reference rows %.0f",
		label, sum(t.plain), sum(t.direct), sum(t.recal), ess[len(ess)/2])
}

// weightedEstimates returns the importance-weighted estimates of a
// chunk: weights w ∝ p(chunk | x)/p(reference | x) of the reference rows
// by a logistic regression between the reference and the chunk's rows on
// the standardised features and their squares (ridge 0.01), then Σ w·loss
// / Σ w over the reference (direct), estimate · Σ w·loss / Σ w·held
// (recalibration), and the weights' effective sample size.
func weightedEstimates(res *EstimateResult, chunk [][]float64, estimate float64) (direct, recal, ess float64) {
	dm := res.Check.Drift
	d := len(dm.Features)
	nref := len(dm.Reference[0])
	p := 1 + 2*d
	n := nref + len(chunk)
	x := mat.NewDense(n, p, nil)
	y := make([]float64, n)
	set := func(i int, row func(j int) float64) {
		x.Set(i, 0, 1)
		for j := range d {
			z := (row(j) - dm.Mean[j]) / dm.Std[j]
			x.Set(i, 1+j, z)
			x.Set(i, 1+d+j, z*z)
		}
	}
	for i := range nref {
		set(i, func(j int) float64 { return dm.Reference[j][i] })
	}
	for k, r := range chunk {
		set(nref+k, func(j int) float64 { return r[j] })
		y[nref+k] = 1
	}
	// Newton's method on the penalised log-likelihood.
	beta := mat.NewVecDense(p, nil)
	eta := make([]float64, n)
	for range 25 {
		var h mat.SymDense
		h.ReuseAsSym(p)
		g := mat.NewVecDense(p, nil)
		wx := mat.NewDense(n, p, nil)
		for i := range n {
			eta[i] = mat.Dot(x.RowView(i), beta)
			q := 1 / (1 + math.Exp(-eta[i]))
			for j := range p {
				g.SetVec(j, g.AtVec(j)+(y[i]-q)*x.At(i, j))
				wx.Set(i, j, q*(1-q)*x.At(i, j))
			}
		}
		var hd mat.Dense
		hd.Mul(x.T(), wx)
		for a := range p {
			g.SetVec(a, g.AtVec(a)-0.01*beta.AtVec(a))
			for b := a; b < p; b++ {
				v := hd.At(a, b)
				if a == b {
					v += 0.01
				}
				h.SetSym(a, b, v)
			}
		}
		var step mat.VecDense
		if err := step.SolveVec(&h, g); err != nil {
			break
		}
		beta.AddVec(beta, &step)
		if mat.Norm(&step, 2) < 1e-8 {
			break
		}
	}
	held, loss := res.Check.Reference.HeldOutEstimates, res.Check.Reference.SquaredErrors
	var sw, sw2, swl, swh float64
	for i := range nref {
		w := math.Exp(mat.Dot(x.RowView(i), beta))
		sw += w
		sw2 += w * w
		swl += w * loss[i]
		swh += w * held[i]
	}
	return swl / sw, estimate * swl / swh, sw * sw / sw2
}

// prodFeatures reads the rows of prod.csv in the check model's feature
// order.
func prodFeatures(b *testing.B, fsys fstest.MapFS, res *EstimateResult) [][]float64 {
	recs, err := csv.NewReader(bytes.NewReader(fsys["prod.csv"].Data)).ReadAll()
	if err != nil {
		b.Fatal(err)
	}
	cols := make([]int, len(res.Check.Drift.Features))
	for j, name := range res.Check.Drift.Features {
		cols[j] = slices.Index(recs[0], name)
	}
	out := make([][]float64, len(recs)-1)
	for i, rec := range recs[1:] {
		out[i] = make([]float64, len(cols))
		for j, c := range cols {
			if out[i][j], err = strconv.ParseFloat(rec[c], 64); err != nil {
				b.Fatal(err)
			}
		}
	}
	return out
}
