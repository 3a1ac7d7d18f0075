package synth

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The closed forms of GaussianEnsemble.Truth against Monte Carlo: the
// demo prints them as the yardstick, so they must be right on their own.
func TestGaussianEnsembleTruthMonteCarlo(t *testing.T) {
	g := GaussianEnsemble{Mu: []float64{0, 0, 0}, Nu: []float64{0.8, 0, 0}, S: 0.9, Tau: 0.6, R: 1.1}
	const gamma = 0.3
	k := func(a, b []float64) float64 {
		var s float64
		for i := range a {
			s += (a[i] - b[i]) * (a[i] - b[i])
		}
		return math.Exp(-gamma * s)
	}
	r := rand.New(rand.NewPCG(1, 2))
	draw := func(mean []float64, s float64) []float64 {
		v := make([]float64, len(mean))
		for i := range v {
			v[i] = mean[i] + s*r.NormFloat64()
		}
		return v
	}
	const n = 200000
	var member, mixture, cross, target float64
	for i := 0; i < n; i++ {
		th := draw(g.Mu, g.Tau)
		th2 := draw(g.Mu, g.Tau)
		member += k(draw(th, g.S), draw(th, g.S))   // same member
		mixture += k(draw(th, g.S), draw(th2, g.S)) // different members
		cross += k(draw(th, g.S), draw(g.Nu, g.R))
		target += k(draw(g.Nu, g.R), draw(g.Nu, g.R))
	}
	member, mixture, cross, target = member/n, mixture/n, cross/n, target/n
	truth := g.Truth(gamma)
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"variance", member - mixture, truth.Variance},
		{"bias", mixture - 2*cross + target, truth.Bias},
		{"noise", -target, truth.Noise},
		{"kernel entropy", -member, truth.KernelEntropy},
	} {
		if math.Abs(c.got-c.want) > 0.005 {
			t.Errorf("%s: Monte Carlo %.4f, closed form %.4f", c.name, c.got, c.want)
		}
	}
	if math.Abs(truth.KernelScore-(truth.Noise+truth.Bias+truth.Variance)) > 1e-15 {
		t.Error("KernelScore != Noise + Bias + Variance")
	}
}

func TestAnswersShapeAndDeterminism(t *testing.T) {
	a := Answers(rand.New(rand.NewPCG(3, 4)), 20, 7, 5)
	b := Answers(rand.New(rand.NewPCG(3, 4)), 20, 7, 5)
	if len(a) != 20 {
		t.Fatalf("%d prompts", len(a))
	}
	for i := range a {
		if len(a[i].Samples) != 7 || len(a[i].Embeddings) != 7 || len(a[i].Embeddings[0]) != 5 {
			t.Fatalf("prompt %d shape", i)
		}
		if a[i].Samples[3] != b[i].Samples[3] || a[i].Embeddings[2][1] != b[i].Embeddings[2][1] {
			t.Fatal("same seed, different data")
		}
		if a[i].Knowledge < 0 || a[i].Knowledge > 1 {
			t.Fatalf("knowledge %v", a[i].Knowledge)
		}
	}
}
