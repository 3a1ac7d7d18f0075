// Command selection measures the regret of the online selection rules of
// `genlens select` (package online: FID-UCB with each of its bonus forms,
// naive-UCB and greedy) over families of simulated Gaussian generators,
// the measurement behind select's default FID-UCB bonus. Every family is
// simulated with the command's protocol (T = 1000 steps of b = 5 rows)
// over many trials from a fixed random stream, so the table is the same
// on every run.
//
//	go run ./bench/selection [-trials 40] [-steps 1000] [-batch 5]
//
// It prints one Markdown row per family: the mean final regret (± its
// standard error over trials) of every rule, and which rule had the
// lowest; then, per rule, on how many families it was the lowest and its
// largest ratio to the lowest.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"math"
	"math/rand/v2"
	"os"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/metric/frechet"
	"github.com/genlens/genlens/metric/online"
)

// family is one simulated setup: G Gaussian generators in dimension d
// around the reference N(0, Σ_r), Σ_r = Q diag(1/(i+1)) Qᵀ (a few dominant
// directions and a long tail, as image embeddings have). Generator g is
// N(shift[g]·u, scale[g]·Σ_r + noise·I) for a fixed unit vector u.
type family struct {
	name         string
	d            int
	shift, scale []float64
	noise        float64
}

func repeat(v float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func linspace(lo, hi float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = lo + (hi-lo)*float64(i)/float64(n-1)
	}
	return out
}

// families spans the gaps between generators (mean shifts of 0.1 to 1
// standard deviations of the leading direction; covariance scales), their
// number (3 to 10) and the noise on every sample (none to as much as the
// reference's total variance, which widens every estimate).
func families() []family {
	return []family{
		{name: "mean shift, small gaps, G=3, d=16", d: 16, shift: []float64{0.1, 0.2, 0.3}, scale: repeat(1, 3)},
		{name: "mean shift, large gaps, G=3, d=16", d: 16, shift: []float64{0.2, 0.6, 1.0}, scale: repeat(1, 3)},
		{name: "mean shift, G=5, d=32", d: 32, shift: linspace(0.2, 1, 5), scale: repeat(1, 5)},
		{name: "mean shift, G=10, d=32", d: 32, shift: linspace(0.1, 1, 10), scale: repeat(1, 10)},
		{name: "mean shift + noise 0.5, G=5, d=32", d: 32, shift: linspace(0.2, 1, 5), scale: repeat(1, 5), noise: 0.5 * harmonicSum(32) / 32},
		{name: "mean shift + noise 1, G=5, d=32", d: 32, shift: linspace(0.2, 1, 5), scale: repeat(1, 5), noise: harmonicSum(32) / 32},
		{name: "collapsed, scales 0.5-1, G=3, d=16", d: 16, shift: repeat(0, 3), scale: []float64{0.5, 0.75, 1}},
		{name: "scales 0.5-1.5, G=3, d=32", d: 32, shift: repeat(0, 3), scale: []float64{0.5, 1, 1.5}},
		{name: "scales 0.1-1.9, G=10, d=32", d: 32, shift: repeat(0, 10), scale: linspace(0.1, 1.9, 10)},
		{name: "scales 0.05-1, G=10, d=32", d: 32, shift: repeat(0, 10), scale: linspace(0.05, 1, 10)},
		{name: "scales 0.9-1.1 + shift, G=5, d=64", d: 64, shift: linspace(0.5, 0, 5), scale: linspace(0.9, 1.1, 5)},
	}
}

// harmonicSum is Tr Σ_r for dimension d.
func harmonicSum(d int) float64 {
	var s float64
	for i := 0; i < d; i++ {
		s += 1 / float64(i+1)
	}
	return s
}

// build returns the reference and one pool of rows per generator.
func (f family) build(rows int, r *rand.Rand) (*online.FIDReference, []*mat.Dense, error) {
	d := f.d
	a := mat.NewDense(d, d, nil)
	for i := range a.RawMatrix().Data {
		a.RawMatrix().Data[i] = r.NormFloat64()
	}
	var qr mat.QR
	qr.Factorize(a)
	var q mat.Dense
	qr.QTo(&q)
	root := mat.NewDense(d, d, nil)
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			root.Set(i, j, q.At(i, j)/math.Sqrt(float64(j+1)))
		}
	}
	sigma := mat.NewSymDense(d, nil)
	sigma.SymOuterK(1, root)
	ref, err := online.NewFIDReference(frechet.Stats{Mu: make([]float64, d), Sigma: sigma})
	if err != nil {
		return nil, nil, err
	}
	u := root.ColView(0) // the leading direction, with the unit variance of its eigenvalue 1
	var pools []*mat.Dense
	for g := range f.scale {
		z := mat.NewDense(rows, d, nil)
		for i := range z.RawMatrix().Data {
			z.RawMatrix().Data[i] = r.NormFloat64()
		}
		p := mat.NewDense(rows, d, nil)
		p.Mul(z, root.T())
		p.Scale(math.Sqrt(f.scale[g]), p)
		for i := 0; i < rows; i++ {
			row := p.RawRowView(i)
			for j := range row {
				row[j] += f.shift[g]*u.AtVec(j) + math.Sqrt(f.noise)*r.NormFloat64()
			}
		}
		pools = append(pools, p)
	}
	return ref, pools, nil
}

// rule is one column of the table: an FID rule with a bonus form.
type rule struct {
	name string
	rule online.FIDRule
	form online.BonusForm
}

var rules = []rule{
	{"fid-ucb (paper)", online.FIDUCB, online.BonusPaper},
	{"fid-ucb (code2024)", online.FIDUCB, online.BonusCode2024},
	{"fid-ucb (fducb2025)", online.FIDUCB, online.BonusFDUCB2025},
	{"naive-ucb", online.FIDNaiveUCB, online.BonusPaper},
	{"greedy", online.FIDGreedy, online.BonusPaper},
}

func main() {
	log.SetFlags(0)
	trials := flag.Int("trials", 40, "independent trials per family")
	steps := flag.Int("steps", 1000, "steps T per trial")
	batch := flag.Int("batch", 5, "rows b drawn per step")
	rows := flag.Int("rows", 4000, "rows in each generator's pool")
	flag.Parse()
	if err := run(*trials, *steps, *batch, *rows); err != nil {
		log.Fatal(err)
	}
}

func run(trials, steps, batch, rows int) error {
	ctx := context.Background()
	sim := online.Simulation{Steps: steps, Batch: batch, Trials: trials, Seed: 1}
	var head []string
	for _, r := range rules {
		head = append(head, r.name)
	}
	fmt.Printf("| family | %s | lowest |\n|---|%s---|\n", strings.Join(head, " | "), strings.Repeat("---|", len(rules)))
	wins := map[string]int{}
	worst := make([]float64, len(rules)) // the largest ratio of a rule's regret to its family's lowest
	for i, f := range families() {
		ref, pools, err := f.build(rows, rand.New(rand.NewPCG(uint64(i)+1, 2)))
		if err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
		}
		regret := make([]online.MeanStd, len(rules))
		for k, r := range rules {
			p := online.DefaultFIDParams()
			p.Form = r.form
			res, err := sim.RunFID(ctx, ref, pools, []online.FIDRule{r.rule}, p)
			if err != nil {
				return fmt.Errorf("%s, %s: %w", f.name, r.name, err)
			}
			regret[k] = res.Algorithms[0].FinalRegret
		}
		best := 0
		cells := make([]string, len(rules))
		for k, m := range regret {
			if m.Mean < regret[best].Mean {
				best = k
			}
			cells[k] = fmt.Sprintf("%.3g ± %.2g", m.Mean, m.Std/math.Sqrt(float64(trials)))
		}
		wins[rules[best].name]++
		for k, m := range regret {
			worst[k] = max(worst[k], m.Mean/regret[best].Mean)
		}
		fmt.Printf("| %s | %s | %s |\n", f.name, strings.Join(cells, " | "), rules[best].name)
	}
	fmt.Fprintln(os.Stderr)
	for k, r := range rules {
		fmt.Fprintf(os.Stderr, "%s: lowest regret on %d of %d families; at worst %.3g times the lowest\n", r.name, wins[r.name], len(families()), worst[k])
	}
	return nil
}
