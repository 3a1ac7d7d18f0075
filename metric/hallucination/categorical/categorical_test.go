package categorical_test

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/genlens/genlens/metric/hallucination"
	"github.com/genlens/genlens/metric/hallucination/categorical"
)

func TestPredictiveByHand(t *testing.T) {
	m := categorical.Model{Groups: 2, Alpha: []float64{1, 2, 3}}
	d := []categorical.Example{{X: 0, Y: 2}, {X: 1, Y: 0}, {X: 0, Y: 2}, {X: 0, Y: 1}}
	post, err := m.Posterior(d)
	if err != nil {
		t.Fatal(err)
	}
	// Group 0: counts (0, 1, 2), Σα = 6, c_0 = 3: (1, 3, 5)/9.
	want := []float64{1.0 / 9, 3.0 / 9, 5.0 / 9}
	if got := post.Predictive(0); !equal(got, want, 1e-15) {
		t.Errorf("Predictive(0) = %v, want %v", got, want)
	}
	// Group 1: counts (1, 0, 0): (2, 2, 3)/7.
	if got := post.Predictive(1); !equal(got, []float64{2.0 / 7, 2.0 / 7, 3.0 / 7}, 1e-15) {
		t.Errorf("Predictive(1) = %v", got)
	}
	logp := make([]float64, 2)
	if err := post.LogProb(context.Background(), 0, []int{0, 2}, logp); err != nil || math.Abs(logp[0]-math.Log(1.0/9)) > 1e-15 || math.Abs(logp[1]-math.Log(5.0/9)) > 1e-15 {
		t.Errorf("LogProb = %v, %v", logp, err)
	}
	if got := post.Concentration(0); !equal(got, []float64{1, 3, 5}, 0) {
		t.Errorf("Concentration(0) = %v", got)
	}
	// Extend leaves the receiver alone.
	next, err := post.Update(categorical.Example{X: 0, Y: 0})
	if err != nil {
		t.Fatal(err)
	}
	if got := next.Predictive(0); !equal(got, []float64{2.0 / 10, 3.0 / 10, 5.0 / 10}, 1e-15) || post.Predictive(0)[0] != 1.0/9 || next.Len() != 5 {
		t.Errorf("after Update: %v (receiver %v)", got, post.Predictive(0))
	}
}

func TestPick(t *testing.T) {
	p := []float64{0.2, 0, 0.5, 0.3}
	for _, tc := range []struct {
		u    float64
		want int
	}{{0, 0}, {0.1999, 0}, {0.2, 2}, {0.6999, 2}, {0.7, 3}, {0.99999, 3}, {1.5, 3}} {
		if got := categorical.Pick(p, tc.u); got != tc.want {
			t.Errorf("Pick(%v, %v) = %d, want %d", p, tc.u, got, tc.want)
		}
	}
}

// Sampling follows the seeding convention: one DrawSeed per response and
// the first uniform of its stream.
func TestSeedingConvention(t *testing.T) {
	m := categorical.Symmetric(3, 4, 0.7)
	post, _ := m.Posterior([]categorical.Example{{X: 1, Y: 3}, {X: 1, Y: 3}, {X: 2, Y: 0}})
	r1 := rand.New(rand.NewPCG(5, 6))
	ys := make([]int, 50)
	logp := make([]float64, 50)
	if err := post.Sample(context.Background(), r1, 1, ys, logp); err != nil {
		t.Fatal(err)
	}
	r2 := rand.New(rand.NewPCG(5, 6))
	pred := post.Predictive(1)
	for i := range ys {
		s := categorical.NewStream(categorical.DrawSeed(r2))
		if want := categorical.Pick(pred, s.Float64()); ys[i] != want || logp[i] != math.Log(pred[want]) {
			t.Fatalf("response %d = %d (log p %v), want %d", i, ys[i], logp[i], want)
		}
	}
	e, _ := post.SamplePair(context.Background(), r2)
	r3 := rand.New(rand.NewPCG(5, 6))
	for range ys {
		categorical.DrawSeed(r3)
	}
	st := categorical.NewStream(categorical.DrawSeed(r3))
	x := categorical.Pick(categorical.Uniform(3), st.Float64())
	y := categorical.Pick(post.Predictive(x), st.Float64())
	if e.X != x || e.Y != y {
		t.Errorf("SamplePair = %v, want (%d, %d)", e, x, y)
	}
	if categorical.DrawSeed(rand.New(rand.NewPCG(1, 1)))>>63 != 0 {
		t.Error("DrawSeed is not a non-negative int64")
	}
}

func TestSamplingFrequencies(t *testing.T) {
	m := categorical.Model{Groups: 1, Alpha: []float64{0.5, 1, 2.5}}
	post, _ := m.Posterior([]categorical.Example{{X: 0, Y: 1}})
	const k = 100000
	ys := make([]int, k)
	logp := make([]float64, k)
	_ = post.Sample(context.Background(), rand.New(rand.NewPCG(1, 2)), 0, ys, logp)
	counts := make([]float64, 3)
	for _, y := range ys {
		counts[y]++
	}
	for y, p := range post.Predictive(0) {
		if se := math.Sqrt(p * (1 - p) / k); math.Abs(counts[y]/k-p) > 5*se {
			t.Errorf("label %d frequency %.4f, predictive %.4f", y, counts[y]/k, p)
		}
	}
}

func TestTrueRateByHand(t *testing.T) {
	m := categorical.Model{Groups: 1, Alpha: []float64{1, 1, 1}}
	post, _ := m.Posterior([]categorical.Example{{X: 0, Y: 0}, {X: 0, Y: 0}}) // predictive (3, 1, 1)/5
	truth := &categorical.Truth{Theta: [][]float64{{0.9, 0.07, 0.03}}}
	cases := []struct{ eps, want float64 }{
		{0.02, 0},
		{0.03, 0},   // cumulative 0.03 reaches ε: Q = log 0.03, nothing strictly below
		{0.05, 0.2}, // label 2 outside: predictive 1/5
		{0.1, 0.2},  // 0.03 + 0.07 = 0.10 reaches ε at label 1: only label 2 below
		{0.11, 0.4}, // labels 1 and 2 outside
		{0.95, 0.4}, // the most likely label is always inside
	}
	for _, tc := range cases {
		if got := post.TrueRate(truth, 0, tc.eps); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("eps=%v: TrueRate = %v, want %v", tc.eps, got, tc.want)
		}
	}
}

// PHR with two labels is a Beta distribution function; check it against
// Definition 4 simulated directly: θ from the posterior, y from the
// predictive, y outside the likely set of θ.
func TestPHRMatchesDefinition4(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct {
		alpha []float64
		d     []categorical.Example
		eps   float64
	}{
		{[]float64{1, 1}, nil, 0.05},
		{[]float64{0.5, 0.5}, []categorical.Example{{X: 0, Y: 0}, {X: 0, Y: 0}, {X: 0, Y: 1}}, 0.05},
		{[]float64{0.5, 2}, []categorical.Example{{X: 0, Y: 0}}, 0.75},
		{[]float64{0.5, 0.5, 0.5}, []categorical.Example{{X: 0, Y: 2}, {X: 0, Y: 2}}, 0.05},
		{[]float64{0.3, 1, 0.3, 0.2}, []categorical.Example{{X: 0, Y: 1}}, 0.2},
	} {
		m := categorical.Model{Groups: 1, Alpha: tc.alpha}
		post, _ := m.Posterior(tc.d)
		got := post.PHR(0, tc.eps, r, 200000)
		conc := post.Concentration(0)
		pred := post.Predictive(0)
		const draws = 200000
		hits := 0
		for range draws {
			th := make([]float64, len(conc))
			s := 0.0
			for i, a := range conc {
				th[i] = distuv.Gamma{Alpha: a, Beta: 1, Src: r}.Rand()
				s += th[i]
			}
			for i := range th {
				th[i] /= s
			}
			y := categorical.Pick(pred, r.Float64())
			if hallucination.OutsideLikelySet(th, tc.eps)[y] {
				hits++
			}
		}
		mc := float64(hits) / draws
		se := math.Sqrt(mc*(1-mc)/draws) + 0.5/math.Sqrt(200000)
		if math.Abs(got-mc) > 4*se {
			t.Errorf("alpha %v, eps %v: PHR %.5f, Definition 4 simulated %.5f ± %.5f", tc.alpha, tc.eps, got, mc, se)
		}
	}
}

func TestEntropyClosedForms(t *testing.T) {
	m := categorical.Model{Groups: 1, Alpha: []float64{0.5, 1, 2}}
	post, _ := m.Posterior([]categorical.Example{{X: 0, Y: 0}, {X: 0, Y: 2}})
	total, aleatoric, epistemic := post.Entropy(0)
	pred := post.Predictive(0)
	h := 0.0
	for _, p := range pred {
		h -= p * math.Log(p)
	}
	if math.Abs(total-h) > 1e-12 || math.Abs(total-aleatoric-epistemic) > 1e-12 {
		t.Errorf("total %v, want %v", total, h)
	}
	// E[H(θ)] by sampling θ from the Dirichlet posterior.
	r := rand.New(rand.NewPCG(1, 1))
	conc := post.Concentration(0)
	const draws = 200000
	var sum, sum2 float64
	for range draws {
		th := make([]float64, len(conc))
		s := 0.0
		for i, a := range conc {
			th[i] = distuv.Gamma{Alpha: a, Beta: 1, Src: r}.Rand()
			s += th[i]
		}
		e := 0.0
		for _, v := range th {
			if v > 0 {
				e -= v / s * math.Log(v/s)
			}
		}
		sum += e
		sum2 += e * e
	}
	mc := sum / draws
	se := math.Sqrt((sum2/draws - mc*mc) / draws)
	if math.Abs(aleatoric-mc) > 4*se {
		t.Errorf("aleatoric %.5f, Monte Carlo %.5f ± %.5f", aleatoric, mc, se)
	}
	if !(epistemic > 0) {
		t.Errorf("epistemic %v, want > 0", epistemic)
	}
}

func TestInvalid(t *testing.T) {
	for name, m := range map[string]categorical.Model{
		"no groups":  {Groups: 0, Alpha: []float64{1, 1}},
		"one label":  {Groups: 1, Alpha: []float64{1}},
		"zero alpha": {Groups: 1, Alpha: []float64{1, 0}},
	} {
		if _, err := m.Posterior(nil); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	m := categorical.Symmetric(2, 2, 1)
	if _, err := m.Posterior([]categorical.Example{{X: 0, Y: 1}, {X: 2, Y: 0}}); err == nil || !strings.Contains(err.Error(), "example 2") {
		t.Errorf("input out of range: %v", err)
	}
	post, _ := m.Posterior(nil)
	if err := post.LogProb(context.Background(), 0, []int{5}, make([]float64, 1)); err == nil {
		t.Error("LogProb of an unknown label: no error")
	}
	if err := post.Sample(context.Background(), rand.New(rand.NewPCG(1, 1)), 3, make([]int, 1), make([]float64, 1)); err == nil {
		t.Error("Sample for an unknown input: no error")
	}
}

func equal(a, b []float64, tol float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(a[i]-b[i]) > tol {
			return false
		}
	}
	return true
}
