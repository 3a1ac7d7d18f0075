package bayeslin_test

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/metric/hallucination"
	"github.com/genlens/genlens/metric/hallucination/bayeslin"
)

func mustFeatures(t testing.TB, s string) bayeslin.Features {
	t.Helper()
	f, err := bayeslin.ParseFeatures(s)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestParseFeatures(t *testing.T) {
	for _, tc := range []struct {
		in      string
		dim     int
		str     string
		wantErr string
	}{
		{"poly:3", 4, "poly:3", ""},
		{"poly:0", 1, "poly:0", ""},
		{"relu:32:7", 32, "relu:32:7", ""},
		{"relu:5", 5, "relu:5:1", ""},
		{"poly:13", 0, "", "degree"},
		{"poly:-1", 0, "", "degree"},
		{"poly", 0, "", "one number"},
		{"relu:0:1", 0, "", "width"},
		{"relu:8:x", 0, "", "seed"},
		{"rbf:3", 0, "", "unknown feature family"},
	} {
		f, err := bayeslin.ParseFeatures(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ParseFeatures(%q) error %v, want one mentioning %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil || f.Dim() != tc.dim || f.String() != tc.str {
			t.Errorf("ParseFeatures(%q) = %v (dim %d), %v; want %s, dim %d", tc.in, f, f.Dim(), err, tc.str, tc.dim)
		}
	}
}

func TestFeatureValues(t *testing.T) {
	phi := make([]float64, 4)
	bayeslin.Poly{Degree: 3}.Eval(-2, phi)
	if want := []float64{1, -2, 4, -8}; !equal(phi, want, 0) {
		t.Errorf("poly:3 at -2 = %v, want %v", phi, want)
	}
	// ReLU features: the prior variance of f(x) with S = 1 is
	// sum φ_i(x)² ≈ x² + 4/3 for a wide layer (doc comment of ReLU).
	f := bayeslin.NewReLU(4096, 3)
	phi = make([]float64, 4096)
	for _, x := range []float64{-2, 0, 1.5} {
		f.Eval(x, phi)
		s := 0.0
		for _, v := range phi {
			if v < 0 {
				t.Fatalf("negative ReLU feature %v", v)
			}
			s += v * v
		}
		if want := x*x + 4.0/3; math.Abs(s-want) > 0.1*want {
			t.Errorf("relu:4096 at x=%v: sum φ² = %.3f, want ≈ %.3f", x, s, want)
		}
	}
}

// A single constant feature is the conjugate normal model, computed by
// hand: prior N(0, S²), three observations.
func TestPosteriorConjugateNormal(t *testing.T) {
	m := bayeslin.Model{Features: bayeslin.Poly{Degree: 0}, Noise: 0.5, PriorScale: 2}
	d := []bayeslin.Example{{X: 0.3, Y: 1}, {X: -1, Y: 2}, {X: 1.9, Y: 4}}
	post, err := m.Posterior(d)
	if err != nil {
		t.Fatal(err)
	}
	// precision 1/4 + 3/0.25 = 12.25; mean = (7/0.25)/12.25.
	wantVar, wantMean := 1/12.25, 28/12.25
	mu, v := post.Predict(0.7)
	if math.Abs(mu-wantMean) > 1e-12 || math.Abs(v-wantVar) > 1e-12 {
		t.Errorf("Predict = (%v, %v), want (%v, %v)", mu, v, wantMean, wantVar)
	}
	logp := make([]float64, 1)
	if err := post.LogProb(context.Background(), 0.7, []float64{3}, logp); err != nil {
		t.Fatal(err)
	}
	s2 := wantVar + 0.25
	if want := -0.5*math.Log(2*math.Pi*s2) - (3-wantMean)*(3-wantMean)/(2*s2); math.Abs(logp[0]-want) > 1e-12 {
		t.Errorf("log p(3 | D) = %v, want %v", logp[0], want)
	}
	tot, ale, epi := post.Entropy(0)
	if want := 0.5 * math.Log(2*math.Pi*math.E*s2); math.Abs(tot-want) > 1e-12 || math.Abs(ale+epi-tot) > 1e-12 {
		t.Errorf("Entropy = %v, %v, %v; want total %v", tot, ale, epi, want)
	}
	if want := 0.5 * math.Log(1+wantVar/0.25); math.Abs(epi-want) > 1e-12 {
		t.Errorf("epistemic = %v, want %v", epi, want)
	}
}

func TestBatchPosteriorEqualsSequentialUpdates(t *testing.T) {
	m := bayeslin.Model{Features: mustFeatures(t, "relu:12:4"), Noise: 0.1, PriorScale: 1}
	r := rand.New(rand.NewPCG(1, 2))
	f, err := m.SampleFunction(r)
	if err != nil {
		t.Fatal(err)
	}
	d := f.Data(r, 40)
	batch, err := m.Posterior(d)
	if err != nil {
		t.Fatal(err)
	}
	seq, err := m.Posterior(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range d {
		if seq, err = seq.Update(e); err != nil {
			t.Fatal(err)
		}
	}
	mb, cb := batch.Weights()
	ms, cs := seq.Weights()
	if !equal(mb, ms, 1e-8) || !mat.EqualApprox(cb, cs, 1e-10) {
		t.Errorf("batch and sequential posteriors differ:\nmean %v\n vs  %v", mb, ms)
	}
	if batch.Len() != 40 || seq.Len() != 40 {
		t.Errorf("Len = %d, %d; want 40", batch.Len(), seq.Len())
	}
}

// ExactPHR is Definition 4 in closed form; here Definition 4 is evaluated
// the long way, by drawing f from the posterior and averaging its true
// hallucination rate (itself checked against Monte Carlo below).
func TestExactPHRMatchesDefinition4(t *testing.T) {
	m := bayeslin.Model{Features: mustFeatures(t, "poly:3"), Noise: 0.1, PriorScale: 1}
	r := rand.New(rand.NewPCG(3, 4))
	truth, _ := m.SampleFunction(r)
	for _, n := range []int{0, 2, 5, 30} {
		post, err := m.Posterior(truth.Data(r, n))
		if err != nil {
			t.Fatal(err)
		}
		mean, cov := post.Weights()
		var chol mat.Cholesky
		if !chol.Factorize(cov) {
			t.Fatal("posterior covariance not positive definite")
		}
		var l mat.TriDense
		chol.LTo(&l)
		for _, x := range []float64{-1.7, 0.4} {
			for _, eps := range []float64{0.05, 0.3} {
				const draws = 20000
				var sum, sum2 float64
				z := make([]float64, len(mean))
				w := make([]float64, len(mean))
				for range draws {
					for i := range z {
						z[i] = r.NormFloat64()
					}
					wv := mat.NewVecDense(len(w), w)
					wv.MulVec(&l, mat.NewVecDense(len(z), z))
					for i := range w {
						w[i] += mean[i]
					}
					f, _ := m.NewFunction(w)
					h := post.TrueRate(f, x, eps)
					sum += h
					sum2 += h * h
				}
				mc := sum / draws
				se := math.Sqrt((sum2/draws - mc*mc) / draws)
				got := post.ExactPHR(x, eps)
				if math.Abs(got-mc) > 4*se+1e-4 {
					t.Errorf("n=%d x=%v eps=%v: ExactPHR %.5f, Definition 4 by sampling f %.5f ± %.5f", n, x, eps, got, mc, se)
				}
			}
		}
	}
}

func TestTrueRateMatchesMonteCarlo(t *testing.T) {
	ctx := context.Background()
	m := bayeslin.Model{Features: mustFeatures(t, "relu:16:2"), Noise: 0.2, PriorScale: 1}
	r := rand.New(rand.NewPCG(5, 6))
	f, _ := m.SampleFunction(r)
	post, _ := m.Posterior(f.Data(r, 6))
	for _, x := range []float64{-1.5, 0, 1.2} {
		want := post.TrueRate(f, x, 0.1)
		// Algorithm 2 with the true mechanism as reference, K large.
		const k = 200000
		got, err := hallucination.Rate(ctx, r, post, f, x, k, 0.1)
		if err != nil {
			t.Fatal(err)
		}
		se := math.Sqrt(want*(1-want)/k) + 1e-3 // binomial + quantile noise
		if math.Abs(got-want) > 4*se {
			t.Errorf("x=%v: Rate with the true f = %.4f, closed form %.4f", x, got, want)
		}
	}
}

// With a huge context the posterior concentrates on the truth and the true
// hallucination rate tends to ε.
func TestTrueRateHugeContextIsEps(t *testing.T) {
	m := bayeslin.Model{Features: mustFeatures(t, "poly:3"), Noise: 0.1, PriorScale: 1}
	r := rand.New(rand.NewPCG(7, 8))
	f, _ := m.SampleFunction(r)
	post, _ := m.Posterior(f.Data(r, 200000))
	for _, eps := range []float64{0.01, 0.05, 0.5} {
		for _, x := range []float64{-1.9, 0.3, 1.1} {
			if got := post.TrueRate(f, x, eps); math.Abs(got-eps) > 0.002 {
				t.Errorf("eps=%v x=%v: true hallucination rate with n=200000 is %.4f", eps, x, got)
			}
			if got := post.ExactPHR(x, eps); math.Abs(got-eps) > 0.002 {
				t.Errorf("eps=%v x=%v: exact PHR with n=200000 is %.4f", eps, x, got)
			}
		}
	}
	// And with no context at all it is large, the prior predictive being
	// far wider than the noise.
	prior, _ := m.Posterior(nil)
	if got := prior.ExactPHR(1, 0.05); got < 0.9 {
		t.Errorf("exact PHR under the prior = %.3f, want > 0.9", got)
	}
}

func TestInvalidInput(t *testing.T) {
	good := bayeslin.Model{Features: bayeslin.Poly{Degree: 1}, Noise: 0.1, PriorScale: 1}
	for name, m := range map[string]bayeslin.Model{
		"no features": {Noise: 0.1, PriorScale: 1},
		"zero noise":  {Features: bayeslin.Poly{Degree: 1}, PriorScale: 1},
		"NaN prior":   {Features: bayeslin.Poly{Degree: 1}, Noise: 0.1, PriorScale: math.NaN()},
		"empty":       {Features: bayeslin.Poly{Degree: 1}, Noise: 0.1, PriorScale: 1, Lo: 1, Hi: 1},
	} {
		if _, err := m.Posterior(nil); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := good.Posterior([]bayeslin.Example{{X: 1, Y: math.NaN()}}); err == nil || !strings.Contains(err.Error(), "example 1") {
		t.Errorf("NaN response: error %v", err)
	}
	if _, err := good.NewFunction([]float64{1}); err == nil {
		t.Error("NewFunction with the wrong number of weights: no error")
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
