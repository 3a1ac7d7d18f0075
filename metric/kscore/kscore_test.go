package kscore

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/metric/kernel"
)

// gauss draws m rows of N(mean, s² I).
func gauss(r *rand.Rand, m int, mean []float64, s float64) *mat.Dense {
	x := mat.NewDense(m, len(mean), nil)
	for i := 0; i < m; i++ {
		for j, mu := range mean {
			x.Set(i, j, mu+s*r.NormFloat64())
		}
	}
	return x
}

// rbfInner is <N(a, s1² I), N(b, s2² I)> under exp(-g||x-y||²) in d
// dimensions: E exp(-g||X-Y||²) with X-Y ~ N(a-b, (s1²+s2²) I).
func rbfInner(g float64, d int, dist2, v1, v2 float64) float64 {
	c := 1 + 2*g*(v1+v2)
	return math.Pow(c, -float64(d)/2) * math.Exp(-g*dist2/c)
}

func TestEntropyHandComputed(t *testing.T) {
	// Linear kernel on 1-D points 1, 2, 3: distinct ordered pairs sum to
	// 2·(2 + 3 + 6) = 22 over 6 pairs.
	x := mat.NewDense(3, 1, []float64{1, 2, 3})
	if got, want := Entropy(kernel.Linear{}, x), -22.0/6; math.Abs(got-want) > 1e-15 {
		t.Errorf("Entropy = %v, want %v", got, want)
	}
	if got := Entropy(kernel.Linear{}, mat.NewDense(1, 1, []float64{1})); !math.IsNaN(got) {
		t.Errorf("Entropy of one sample = %v, want NaN", got)
	}
}

func TestEntropyRBFClosedForm(t *testing.T) {
	// For X, X' iid N(mu, s² I_d): E exp(-g||X-X'||²) = (1 + 4 g s²)^(-d/2).
	r := rand.New(rand.NewPCG(7, 8))
	for _, c := range []struct {
		d    int
		s, g float64
	}{{1, 1, 0.5}, {5, 1, 0.1}, {20, 0.5, 0.05}} {
		mu := make([]float64, c.d)
		for i := range mu {
			mu[i] = 3 * r.NormFloat64()
		}
		x := gauss(r, 3000, mu, c.s)
		got := Entropy(kernel.RBF{Gamma: c.g}, x)
		want := -math.Pow(1+4*c.g*c.s*c.s, -float64(c.d)/2)
		if math.Abs(got-want) > 0.01 {
			t.Errorf("d=%d s=%v g=%v: entropy %v, closed form %v", c.d, c.s, c.g, got, want)
		}
	}
}

// twoLevel is the model used for the unbiasedness tests: model i is
// P_i = N(θ_i, s² I) with θ_i ~ N(mu, τ² I); its partner distribution (for
// covariances) is Q_i = N(θ_i, u² I); the target is N(nu, r² I).
type twoLevel struct {
	d              int
	s, tau, u, rr  float64
	mu, nu         []float64
	gamma          float64
	nModels, m, nY int
}

func (p twoLevel) truth() (variance, cov, bias, noise float64) {
	g, d := p.gamma, p.d
	s2, t2, u2, r2 := p.s*p.s, p.tau*p.tau, p.u*p.u, p.rr*p.rr
	var dmn float64
	for i := range p.mu {
		dmn += (p.mu[i] - p.nu[i]) * (p.mu[i] - p.nu[i])
	}
	// E||P||² - ||E P||²; E P is the mixture N(mu, (s²+τ²) I).
	variance = rbfInner(g, d, 0, s2, s2) - rbfInner(g, d, 0, s2+t2, s2+t2)
	// E<P, Q> - <E P, E Q>, P and Q sharing θ.
	cov = rbfInner(g, d, 0, s2, u2) - rbfInner(g, d, 0, s2+t2, u2+t2)
	bias = rbfInner(g, d, 0, s2+t2, s2+t2) - 2*rbfInner(g, d, dmn, s2+t2, r2) + rbfInner(g, d, 0, r2, r2)
	noise = -rbfInner(g, d, 0, r2, r2)
	return
}

func (p twoLevel) draw(r *rand.Rand) (xs, ys []*mat.Dense, y *mat.Dense) {
	for i := 0; i < p.nModels; i++ {
		theta := make([]float64, p.d)
		for j := range theta {
			theta[j] = p.mu[j] + p.tau*r.NormFloat64()
		}
		xs = append(xs, gauss(r, p.m, theta, p.s))
		ys = append(ys, gauss(r, p.m, theta, p.u))
	}
	return xs, ys, gauss(r, p.nY, p.nu, p.rr)
}

// meanSE returns the mean and its standard error.
func meanSE(v []float64) (float64, float64) {
	var m, s float64
	for _, x := range v {
		m += x
	}
	m /= float64(len(v))
	for _, x := range v {
		s += (x - m) * (x - m)
	}
	return m, math.Sqrt(s / float64(len(v)-1) / float64(len(v)))
}

func TestUnbiasedTwoLevelGaussian(t *testing.T) {
	// Few models and few samples each: a biased normaliser (n instead of
	// n-1, m² instead of m(m-1)) would shift the mean by far more than the
	// Monte Carlo error at these sizes.
	p := twoLevel{d: 2, s: 0.7, tau: 0.6, u: 0.5, rr: 0.9, mu: []float64{0, 0.5}, nu: []float64{0.4, 0}, gamma: 0.5, nModels: 3, m: 3, nY: 4}
	wantVar, wantCov, wantBias, wantNoise := p.truth()
	wantScore := wantNoise + wantBias + wantVar
	k := kernel.RBF{Gamma: p.gamma}
	r := rand.New(rand.NewPCG(9, 10))
	const trials = 20000
	var vs, cs, bs, ns, ss, gaps []float64
	for trial := 0; trial < trials; trial++ {
		xs, ys, y := p.draw(r)
		d, err := Decompose(k, xs, y)
		if err != nil {
			t.Fatal(err)
		}
		c, err := Covariance(k, xs, ys)
		if err != nil {
			t.Fatal(err)
		}
		vs, cs, bs, ns, ss = append(vs, d.Variance), append(cs, c), append(bs, d.Bias), append(ns, d.Noise), append(ss, d.KernelScore)
		gaps = append(gaps, d.IdentityGap)
	}
	for _, c := range []struct {
		name string
		got  []float64
		want float64
	}{
		{"variance", vs, wantVar}, {"covariance", cs, wantCov}, {"bias", bs, wantBias},
		{"noise", ns, wantNoise}, {"kernel score", ss, wantScore},
	} {
		m, se := meanSE(c.got)
		if math.Abs(m-c.want) > 4*se {
			t.Errorf("%s: mean estimate %.5f ± %.5f, closed form %.5f", c.name, m, se, c.want)
		} else {
			t.Logf("%s: mean estimate %.5f ± %.5f, closed form %.5f", c.name, m, se, c.want)
		}
	}
	for _, g := range gaps {
		if math.Abs(g) > 1e-12 {
			t.Fatalf("identity gap %v: kernel score != noise + bias + variance", g)
		}
	}
}

func TestBrierDecomposition(t *testing.T) {
	// Gruber & Buettner (ICML 2024), Example 3.3: with the delta kernel (one-hot outcomes and the
	// linear kernel) on l classes, the kernel score + 1 is the Brier score,
	// noise = -||Q||², bias = ||E P - Q||² and variance = Σ_c Var(P_c).
	// Predicted distributions P are drawn from a fixed finite menu.
	menu := [][]float64{{0.7, 0.2, 0.1}, {0.2, 0.5, 0.3}, {0.1, 0.1, 0.8}}
	weights := []float64{0.5, 0.3, 0.2}
	q := []float64{0.5, 0.3, 0.2}
	l := len(q)
	var eP [3]float64
	var eSq, eBrier float64
	for a, pa := range menu {
		var sq float64
		for c := range pa {
			eP[c] += weights[a] * pa[c]
			sq += pa[c] * pa[c]
		}
		eSq += weights[a] * sq
		for y := 0; y < l; y++ { // Brier score of P against outcome y ~ Q
			var bs float64
			for c := range pa {
				ind := 0.0
				if c == y {
					ind = 1
				}
				bs += (pa[c] - ind) * (pa[c] - ind)
			}
			eBrier += weights[a] * q[y] * bs
		}
	}
	var normEP, normQ, biasT float64
	for c := range q {
		normEP += eP[c] * eP[c]
		normQ += q[c] * q[c]
		biasT += (eP[c] - q[c]) * (eP[c] - q[c])
	}
	wantVar := eSq - normEP // Σ_c Var(P_c)
	// Example 3.3: E[BS] = 1 - ||Q||² + ||E P - Q||² + Σ_c Var(P_c).
	if math.Abs(eBrier-(1-normQ+biasT+wantVar)) > 1e-12 {
		t.Fatalf("closed-form Brier decomposition broken: %v vs %v", eBrier, 1-normQ+biasT+wantVar)
	}

	r := rand.New(rand.NewPCG(11, 12))
	categorical := func(p []float64) int {
		u := r.Float64()
		for c, v := range p {
			if u < v {
				return c
			}
			u -= v
		}
		return len(p) - 1
	}
	oneHot := func(p []float64, m int) *mat.Dense {
		x := mat.NewDense(m, l, nil)
		for i := 0; i < m; i++ {
			x.Set(i, categorical(p), 1)
		}
		return x
	}
	var vs, bs, ns, brier []float64
	for trial := 0; trial < 6000; trial++ {
		var sets []*mat.Dense
		for i := 0; i < 4; i++ {
			sets = append(sets, oneHot(menu[categorical(weights)], 3))
		}
		d, err := Decompose(kernel.Linear{}, sets, oneHot(q, 3))
		if err != nil {
			t.Fatal(err)
		}
		vs, bs, ns, brier = append(vs, d.Variance), append(bs, d.Bias), append(ns, d.Noise), append(brier, d.KernelScore+1)
	}
	for _, c := range []struct {
		name string
		got  []float64
		want float64
	}{{"variance", vs, wantVar}, {"bias", bs, biasT}, {"noise", ns, -normQ}, {"brier", brier, eBrier}} {
		m, se := meanSE(c.got)
		if math.Abs(m-c.want) > 4*se {
			t.Errorf("%s: mean estimate %.5f ± %.5f, closed form %.5f", c.name, m, se, c.want)
		}
	}
}

func TestMMD2AndScoreHandComputed(t *testing.T) {
	// Linear kernel on scalars: x = {1, 3}, y = {0, 2, 4}.
	// within(x) = 1·3 = 3; within(y) = mean of 0,0,8 over 3 pairs = 8/3;
	// between = mean of x_i·y_j = (1+3)(0+2+4)/6 = 4.
	x := mat.NewDense(2, 1, []float64{1, 3})
	y := mat.NewDense(3, 1, []float64{0, 2, 4})
	mmd, err := MMD2(kernel.Linear{}, x, y)
	if err != nil {
		t.Fatal(err)
	}
	if want := 3 + 8.0/3 - 8; math.Abs(mmd-want) > 1e-14 {
		t.Errorf("MMD2 = %v, want %v", mmd, want)
	}
	score, _ := Score(kernel.Linear{}, x, y)
	if want := 3.0 - 8; math.Abs(score-want) > 1e-14 {
		t.Errorf("Score = %v, want %v", score, want)
	}
	noise, _ := Noise(kernel.Linear{}, y)
	if want := -8.0 / 3; math.Abs(noise-want) > 1e-14 {
		t.Errorf("Noise = %v, want %v", noise, want)
	}
	if _, err := MMD2(kernel.Linear{}, mat.NewDense(1, 1, []float64{1}), y); err == nil {
		t.Error("MMD2 with one sample: want error")
	}
}

func TestVarianceHandComputed(t *testing.T) {
	// Linear kernel, two models with samples {1, 3} and {2, 6}:
	// within: 1·3 = 3 and 2·6 = 12 -> mean 7.5; between: mean over the
	// 4 cross pairs = (1+3)(2+6)/4 = 8 -> Var = 7.5 - 8 = -0.5.
	xs := []*mat.Dense{mat.NewDense(2, 1, []float64{1, 3}), mat.NewDense(2, 1, []float64{2, 6})}
	v, err := Variance(kernel.Linear{}, xs)
	if err != nil {
		t.Fatal(err)
	}
	if v != -0.5 {
		t.Errorf("Variance = %v, want -0.5", v)
	}
	// Covariance of the collection with itself (Eq. 10, diagonal pairs
	// included): same-model means (1+3)²/4 = 4 and (2+6)²/4 = 16 -> 10,
	// minus 8 = 2.
	c, err := Covariance(kernel.Linear{}, xs, xs)
	if err != nil {
		t.Fatal(err)
	}
	if c != 2 {
		t.Errorf("Covariance(X, X) = %v, want 2", c)
	}
	if got := EnsembleGain(0.0052, 0.0049, 2); math.Abs(got-0.00015) > 1e-15 {
		t.Errorf("EnsembleGain = %v, want (1/2)·0.0003", got)
	}
	if _, err := Variance(kernel.Linear{}, xs[:1]); err == nil {
		t.Error("Variance of one model: want error")
	}
}

func TestCovarianceMatrixMatchesPairwise(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	k := kernel.RBF{Gamma: 0.3}
	var epochs [][]*mat.Dense
	for e := 0; e < 4; e++ {
		var ms []*mat.Dense
		for i := 0; i < 5; i++ {
			ms = append(ms, gauss(r, 6+e, []float64{float64(i) * 0.3, float64(e) * 0.1, 0}, 1))
		}
		epochs = append(epochs, ms)
	}
	cov, vars, err := CovarianceMatrix(context.Background(), k, epochs)
	if err != nil {
		t.Fatal(err)
	}
	corr := CorrelationMatrix(cov)
	for e := range epochs {
		v, _ := Variance(k, epochs[e])
		if math.Abs(v-vars[e]) > 1e-12 {
			t.Errorf("variance[%d] = %v, Variance = %v", e, vars[e], v)
		}
		for f := range epochs {
			c, _ := Covariance(k, epochs[e], epochs[f])
			if math.Abs(c-cov.At(e, f)) > 1e-12 {
				t.Errorf("cov[%d][%d] = %v, Covariance = %v", e, f, cov.At(e, f), c)
			}
			rho, _ := Correlation(k, epochs[e], epochs[f])
			if math.Abs(rho-corr.At(e, f)) > 1e-12 {
				t.Errorf("corr[%d][%d] = %v, Correlation = %v", e, f, corr.At(e, f), rho)
			}
		}
		if math.Abs(corr.At(e, e)-1) > 1e-12 {
			t.Errorf("corr[%d][%d] = %v, want 1", e, e, corr.At(e, e))
		}
	}
}

func TestDecomposeConditionalAverages(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	k := kernel.RBF{Gamma: 0.5}
	models := make([][]*mat.Dense, 3)
	var targets []*mat.Dense
	for c := 0; c < 4; c++ {
		for i := range models {
			models[i] = append(models[i], gauss(r, 5, []float64{float64(c), 0}, 1))
		}
		targets = append(targets, gauss(r, 7, []float64{float64(c), 0.5}, 1))
	}
	mean, per, err := DecomposeConditional(context.Background(), k, models, targets)
	if err != nil {
		t.Fatal(err)
	}
	var bias float64
	for c := range per {
		d, _ := Decompose(k, []*mat.Dense{models[0][c], models[1][c], models[2][c]}, targets[c])
		if d != per[c] {
			t.Errorf("instance %d: %+v != %+v", c, per[c], d)
		}
		bias += d.Bias
	}
	if math.Abs(mean.Bias-bias/4) > 1e-15 {
		t.Errorf("mean bias %v, want %v", mean.Bias, bias/4)
	}
	if _, _, err := DecomposeConditional(context.Background(), k, [][]*mat.Dense{models[0], models[1][:2]}, nil); err == nil {
		t.Error("ragged instances: want error")
	}
}

func TestMismatchedDimension(t *testing.T) {
	_, err := Decompose(kernel.Linear{}, []*mat.Dense{mat.NewDense(2, 3, nil), mat.NewDense(2, 4, nil)}, nil)
	if err == nil {
		t.Error("want dimension error")
	}
}

func TestCMSHandComputed(t *testing.T) {
	// Linear kernel on scalars x = {1, 3}, y = {2, 6}: <μx, μy> = 2·4 = 8,
	// ||μx||² = 4, ||μy||² = 16 -> 8/8 = 1 (parallel means in 1-D).
	x := mat.NewDense(2, 1, []float64{1, 3})
	y := mat.NewDense(2, 1, []float64{2, 6})
	if c, err := CMS(kernel.Linear{}, x, y); err != nil || math.Abs(c-1) > 1e-15 {
		t.Errorf("CMS = %v, %v; want 1", c, err)
	}
	// RBF (γ = 1) on x = {0}, y = {0, 1}: <μx, μy> = (1 + e^-1)/2,
	// ||μx||² = 1, ||μy||² = (2 + 2e^-1)/4.
	x = mat.NewDense(1, 1, []float64{0})
	y = mat.NewDense(2, 1, []float64{0, 1})
	e := math.Exp(-1)
	want := (1 + e) / 2 / math.Sqrt((2+2*e)/4)
	if c, _ := CMS(kernel.RBF{Gamma: 1}, x, y); math.Abs(c-want) > 1e-15 {
		t.Errorf("CMS = %v, want %v", c, want)
	}
}

// TestCovarianceMatrixCancel: cancelling the context stops a long
// computation (20,000 samples, seconds of kernel sums) within seconds,
// with the context's error.
func TestCovarianceMatrixCancel(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	var epochs [][]*mat.Dense
	for e := 0; e < 2; e++ {
		var ms []*mat.Dense
		for i := 0; i < 25; i++ {
			ms = append(ms, gauss(r, 400, make([]float64, 32), 1))
		}
		epochs = append(epochs, ms)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var cancelled time.Time
	timer := time.AfterFunc(50*time.Millisecond, func() { cancelled = time.Now(); cancel() })
	defer timer.Stop()
	_, _, err := CovarianceMatrix(ctx, kernel.RBF{Gamma: 1.0 / 32}, epochs)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	// The bound leaves room for a loaded CI machine (other test binaries
	// share its cores); the uncancelled computation takes far longer.
	if d := time.Since(cancelled); d > 3*time.Second {
		t.Errorf("returned %v after the cancel, want within 3 s", d)
	}
	// DecomposeConditional stops too.
	if _, _, err := DecomposeConditional(ctx, kernel.RBF{Gamma: 1}, [][]*mat.Dense{epochs[0][:1], epochs[1][:1]}, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("DecomposeConditional after cancel: err = %v, want context.Canceled", err)
	}
}
