package nn

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func randMatrix(r *rand.Rand, n, d int) *mat.Dense {
	x := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			x.Set(i, j, r.NormFloat64())
		}
	}
	return x
}

// smoothLoss is a per-sample loss with nonzero second derivatives and
// cross-output terms, so a gradient bug in any output shows up.
func smoothLoss(t []float64, k int) Loss {
	return PerSample(func(i int, out, grad []float64) float64 {
		var v float64
		for j := range out {
			d := out[j] - t[i*k+j]
			v += 0.5*d*d + math.Sin(out[j])*float64(j+1)
			grad[j] = d + math.Cos(out[j])*float64(j+1)
		}
		if k > 1 {
			v += out[0] * out[1]
			grad[0] += out[1]
			grad[1] += out[0]
		}
		return v
	})
}

// lossAt evaluates loss on the given rows without training.
func lossAt(net *MLP, x *mat.Dense, rows []int, loss Loss) float64 {
	tr, err := NewTrainer(net, x, TrainConfig{LR: 1}, nil)
	if err != nil {
		panic(err)
	}
	out := tr.Forward(rows)
	return loss(tr.rows, out, tr.OutputGrad())
}

func TestGradientFiniteDifferences(t *testing.T) {
	for _, tc := range []struct {
		name  string
		sizes []int
		rows  []int // nil: full batch
	}{
		{"one hidden layer", []int{3, 5, 2}, nil},
		{"seed shape, one input", []int{1, 16, 16, 1}, nil},
		{"wide input, narrow hidden", []int{6, 4, 7, 3}, nil},
		{"mini-batch with repeats", []int{2, 8, 8, 2}, []int{4, 1, 4, 9, 0}},
		{"no hidden layer", []int{4, 2}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(7, uint64(len(tc.sizes))))
			const n = 12
			net, err := New(tc.sizes, r)
			if err != nil {
				t.Fatal(err)
			}
			x := randMatrix(r, n, tc.sizes[0])
			k := net.Outputs()
			targets := make([]float64, n*k)
			for i := range targets {
				targets[i] = r.NormFloat64()
			}
			loss := smoothLoss(targets, k)
			tr, err := NewTrainer(net, x, TrainConfig{LR: 1}, nil)
			if err != nil {
				t.Fatal(err)
			}
			out := tr.Forward(tc.rows)
			g := tr.OutputGrad()
			loss(tr.rows, out, g)
			tr.Backward(g)
			analytic := append([]float64(nil), tr.Gradient()...)
			const h = 1e-6
			var worst float64
			for p := range net.Params {
				orig := net.Params[p]
				net.Params[p] = orig + h
				up := lossAt(net, x, tc.rows, loss)
				net.Params[p] = orig - h
				down := lossAt(net, x, tc.rows, loss)
				net.Params[p] = orig
				numeric := (up - down) / (2 * h)
				err := math.Abs(numeric-analytic[p]) / math.Max(1, math.Abs(numeric))
				worst = math.Max(worst, err)
				if err > 1e-6 {
					t.Errorf("param %d: analytic %.9g, finite difference %.9g", p, analytic[p], numeric)
				}
			}
			t.Logf("%d parameters, worst relative error %.2g", len(net.Params), worst)
		})
	}
}

func TestAdamHandComputed(t *testing.T) {
	// Two parameters, three steps, lr 0.1, weight decay 0.5, gradients
	// given. Expected values computed by hand from the PyTorch update:
	// g' = g + wd θ; m = 0.9 m + 0.1 g'; v = 0.999 v + 0.001 g'²;
	// θ -= lr/(1-0.9^t) m / (sqrt(v)/sqrt(1-0.999^t) + 1e-8).
	a := NewAdam(2, 0.1, 0.5)
	theta := []float64{1, -2}
	grads := [][]float64{{0.5, 0}, {-1, 2}, {0, 0}}
	// Step 1, θ0 = 1: g' = 0.5 + 0.5 = 1; m = 0.1, v = 0.001;
	// m̂ = 1, v̂ = 1: θ = 1 - 0.1 * 1/(1 + 1e-8).
	// θ1 = -2: g' = 0 + 0.5 (-2) = -1 -> θ = -2 + 0.1/(1+1e-8).
	want := [][]float64{
		{1 - 0.1/(1+1e-8), -2 + 0.1/(1+1e-8)},
	}
	a.Step(theta, grads[0])
	for i := range theta {
		if math.Abs(theta[i]-want[0][i]) > 1e-15 {
			t.Fatalf("step 1: θ[%d] = %.17g, want %.17g", i, theta[i], want[0][i])
		}
	}
	// Step 2 for θ0 (now 0.9 + 1e-9-ish): computed in closed form here
	// step by step, independently of Adam's code path.
	th := theta[0]
	g := -1 + 0.5*th
	m := 0.9*0.1 + 0.1*g
	v := 0.999*0.001 + 0.001*g*g
	mh := m / (1 - 0.81)
	vh := v / (1 - 0.999*0.999)
	th2 := th - 0.1*mh/(math.Sqrt(vh)+1e-8)
	a.Step(theta, grads[1])
	if math.Abs(theta[0]-th2) > 1e-14 {
		t.Fatalf("step 2: θ[0] = %.17g, want %.17g", theta[0], th2)
	}
	// The same by hand: g' = -1 + 0.5 (0.9) = -0.55, m = 0.035,
	// v = 0.0013015, m̂ = 0.035/0.19 = 0.1842105, v̂ = 0.0013015/0.001999
	// = 0.6510755, step = 0.1 (0.1842105/0.8068925) = 0.0228296, so
	// θ = 0.9 - 0.0228296 = 0.8771704. A literal, so that a change in
	// both code paths at once cannot pass unnoticed.
	if math.Abs(theta[0]-0.8771704) > 1e-7 {
		t.Errorf("step 2: θ[0] = %.10f, want 0.8771704", theta[0])
	}
	// Step 3 with zero gradient: only weight decay and momentum move θ.
	before := theta[1]
	a.Step(theta, grads[2])
	if theta[1] == before {
		t.Error("step 3: momentum should still move θ[1]")
	}
	if a.Steps() != 3 {
		t.Errorf("Steps() = %d", a.Steps())
	}
}

func TestAdamNoWeightDecayFirstStepIsLR(t *testing.T) {
	// Adam's first step moves every parameter by lr·sign(g) (up to eps:
	// lr |g|/(|g| + 1e-8)), whatever the gradient's magnitude.
	a := NewAdam(3, 0.01, 0)
	p := []float64{0, 0, 0}
	a.Step(p, []float64{1e-3, -7, 250})
	for i, want := range []float64{-0.01, 0.01, -0.01} {
		if math.Abs(p[i]-want) > 1e-7 {
			t.Errorf("p[%d] = %g, want %g", i, p[i], want)
		}
	}
}

func TestInitBounds(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	net, err := New([]int{16, 64, 1}, r)
	if err != nil {
		t.Fatal(err)
	}
	for l, fan := range []int{16, 64} {
		w, b := net.Layer(l)
		bound := 1 / math.Sqrt(float64(fan))
		var maxAbs, sumSq float64
		all := append(append([]float64(nil), w.Data...), b...)
		for _, v := range all {
			maxAbs = math.Max(maxAbs, math.Abs(v))
			sumSq += v * v
		}
		if maxAbs > bound {
			t.Errorf("layer %d: |w| up to %g > 1/sqrt(%d) = %g", l, maxAbs, fan, bound)
		}
		// U(-c, c) has variance c²/3.
		if got, want := sumSq/float64(len(all)), bound*bound/3; len(all) > 500 && math.Abs(got/want-1) > 0.15 {
			t.Errorf("layer %d: mean square %g, want about %g", l, got, want)
		}
	}
	if _, err := New([]int{3}, r); err == nil {
		t.Error("New accepted a single width")
	}
	if _, err := New([]int{3, 0, 1}, r); err == nil {
		t.Error("New accepted a zero width")
	}
}

func TestPredictMatchesForwardAndHand(t *testing.T) {
	// A 2 -> 2 -> 1 network with hand-set weights.
	net := &MLP{Sizes: []int{2, 2, 1}, Params: []float64{
		1, -1, // W1 row 0
		0.5, 2, // W1 row 1
		0, -1, // b1
		3, -2, // W2
		0.25, // b2
	}}
	x := mat.NewDense(2, 2, []float64{1, 2, -1, 0.5})
	// Row 0: z1 = (1-2+0, 0.5+4-1) = (-1, 3.5) -> relu (0, 3.5); y = -7 + 0.25.
	// Row 1: z1 = (-1-0.5, -0.5+1-1) = (-1.5, -0.5) -> (0, 0); y = 0.25.
	want := []float64{-6.75, 0.25}
	got := net.Predict1(x)
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-15 {
			t.Errorf("row %d: %g, want %g", i, got[i], want[i])
		}
	}
	tr, err := NewTrainer(net, x, TrainConfig{LR: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := tr.Forward(nil)
	for i := range want {
		if out[i] != got[i] {
			t.Errorf("Forward row %d = %g, Predict %g", i, out[i], got[i])
		}
	}
	// Predict in blocks: more rows than predictBlock.
	r := rand.New(rand.NewPCG(3, 3))
	big := randMatrix(r, predictBlock+37, 2)
	p := net.Predict1(big)
	for _, i := range []int{0, predictBlock - 1, predictBlock, predictBlock + 36} {
		one := net.Predict1(mat.NewDense(1, 2, []float64{big.At(i, 0), big.At(i, 1)}))
		if p[i] != one[0] {
			t.Errorf("row %d: block predict %g, single %g", i, p[i], one[0])
		}
	}
}

func TestFitLearnsAndIsDeterministic(t *testing.T) {
	fit := func(batch int) (*MLP, float64) {
		r := rand.New(rand.NewPCG(11, 12))
		const n = 200
		x := randMatrix(r, n, 2)
		y := make([]float64, n)
		for i := range y {
			y[i] = math.Sin(2*x.At(i, 0)) + 0.5*x.At(i, 1)
		}
		net, _ := New([]int{2, 64, 64, 1}, r)
		cfg := DefaultTrainConfig()
		cfg.BatchSize = batch
		last, err := Fit(context.Background(), net, x, MSE(y), cfg, r)
		if err != nil {
			t.Fatal(err)
		}
		return net, last
	}
	for _, batch := range []int{0, 32} {
		a, la := fit(batch)
		b, lb := fit(batch)
		if la != lb {
			t.Errorf("batch %d: same seed gave losses %v and %v", batch, la, lb)
		}
		for i := range a.Params {
			if a.Params[i] != b.Params[i] {
				t.Fatalf("batch %d: same seed gave different parameter %d", batch, i)
			}
		}
		// The target has variance about 0.5 + 0.25; a fitted network
		// explains nearly all of it.
		if la > 0.02 {
			t.Errorf("batch %d: final training MSE %g, want < 0.02", batch, la)
		}
	}
}

func TestEpochAllocatesNothing(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	const n = 100
	x := randMatrix(r, n, 1)
	y := make([]float64, n)
	for i := range y {
		y[i] = x.At(i, 0)
	}
	for _, batch := range []int{0, 30} {
		net, _ := New([]int{1, 64, 64, 1}, r)
		cfg := DefaultTrainConfig()
		cfg.BatchSize = batch
		tr, err := NewTrainer(net, x, cfg, r)
		if err != nil {
			t.Fatal(err)
		}
		loss := MSE(y)
		if a := testing.AllocsPerRun(20, func() { tr.Epoch(loss) }); a != 0 {
			t.Errorf("batch %d: %v allocations per epoch, want 0", batch, a)
		}
	}
}

func TestTrainerErrors(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	net, _ := New([]int{2, 3, 1}, r)
	x := randMatrix(r, 5, 2)
	for _, tc := range []struct {
		name string
		net  *MLP
		x    *mat.Dense
		cfg  TrainConfig
		rng  *rand.Rand
	}{
		{"zero learning rate", net, x, TrainConfig{}, nil},
		{"negative weight decay", net, x, TrainConfig{LR: 1, WeightDecay: -1}, nil},
		{"wrong input width", net, randMatrix(r, 5, 3), TrainConfig{LR: 1}, nil},
		{"mini-batch without rng", net, x, TrainConfig{LR: 1, BatchSize: 2}, nil},
		{"truncated params", &MLP{Sizes: []int{2, 3, 1}, Params: make([]float64, 5)}, x, TrainConfig{LR: 1}, nil},
		{"NaN param", &MLP{Sizes: []int{1, 1}, Params: []float64{math.NaN(), 0}}, randMatrix(r, 2, 1), TrainConfig{LR: 1}, nil},
	} {
		if _, err := NewTrainer(tc.net, tc.x, tc.cfg, tc.rng); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
	// A diverging fit reports the epoch.
	y := []float64{1e300, -1e300, 1e300, 1, 2}
	if _, err := Fit(context.Background(), net.Clone(), x, MSE(y), TrainConfig{Epochs: 5, LR: 0.1}, nil); err == nil {
		t.Error("Fit with an infinite loss returned no error")
	}
}

func TestJSONRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	net, _ := New([]int{3, 4, 1}, r)
	b, err := json.Marshal(net)
	if err != nil {
		t.Fatal(err)
	}
	var back MLP
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if err := back.Validate(); err != nil {
		t.Fatal(err)
	}
	x := randMatrix(r, 7, 3)
	p, q := net.Predict1(x), back.Predict1(x)
	for i := range p {
		if p[i] != q[i] {
			t.Fatalf("row %d: %v after round trip, %v before", i, q[i], p[i])
		}
	}
}

// TestFitStopsWhenCancelled: Fit checks its context before every epoch
// and between mini-batches, so a cancel stops it after the step under
// way, with ctx.Err().
func TestFitStopsWhenCancelled(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	const n = 100
	x := randMatrix(r, n, 1)
	y := make([]float64, n)
	for _, batch := range []int{0, 10} {
		net, _ := New([]int{1, 8, 1}, r)
		cfg := DefaultTrainConfig()
		cfg.BatchSize = batch
		ctx, cancel := context.WithCancel(context.Background())
		calls := 0
		mse := MSE(y)
		loss := func(rows []int, out, grad []float64) float64 {
			if calls++; calls == 3 {
				cancel()
			}
			return mse(rows, out, grad)
		}
		_, err := Fit(ctx, net, x, loss, cfg, r)
		if !errors.Is(err, context.Canceled) || calls != 3 {
			t.Errorf("batch %d: %v after %d steps, want context.Canceled after 3", batch, err, calls)
		}
	}
}

// Widths read from a file are bounded before they multiply: [1, W, 1]
// with W = (2 + 2^64)/3 needs 3W + 1 parameters, which wraps round to 3 in
// 64 bits, so a 3-parameter file used to validate and then panic (or ask
// for exabytes) in Predict.
func TestValidateWidthOverflow(t *testing.T) {
	const w = 6148914691236517206 // (2 + 2^64) / 3
	m := &MLP{Sizes: []int{1, w, 1}, Params: make([]float64, 3)}
	if err := m.Validate(); err == nil || !strings.Contains(err.Error(), "width") {
		t.Errorf("widths %v: %v", m.Sizes, err)
	}
	if err := (&MLP{Sizes: []int{1, MaxWidth + 1, 1}, Params: make([]float64, 3*(MaxWidth+1)+1)}).Validate(); err == nil {
		t.Error("a width over MaxWidth validates")
	}
}

// A network of MaxWidth still predicts, in blocks small enough for its
// activations.
func TestPredictWideNetwork(t *testing.T) {
	sizes := []int{2, MaxWidth, 1}
	m := &MLP{Sizes: sizes, Params: make([]float64, 2*MaxWidth+MaxWidth+MaxWidth+1)}
	m.Params[len(m.Params)-1] = 0.5 // output bias
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	out := m.Predict1(mat.NewDense(300, 2, nil))
	if len(out) != 300 || out[299] != 0.5 {
		t.Errorf("got %d outputs, last %v", len(out), out[len(out)-1])
	}
}

// FitEach calls its hook after every `every` epochs with the epochs done,
// stops when the hook says so, and allocates nothing per epoch with a
// hook that evaluates held-out rows.
func TestFitEach(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 7))
	const n = 50
	x := randMatrix(r, n, 1)
	y := make([]float64, n)
	for i := range y {
		y[i] = 3 * x.At(i, 0)
	}
	net, _ := New([]int{1, 8, 1}, r)
	cfg := DefaultTrainConfig()
	cfg.Epochs = 23
	tr, err := NewTrainer(net, x, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	var seen []int
	if _, err := tr.FitEach(context.Background(), MSE(y), 5, func(e int) bool { seen = append(seen, e); return true }); err != nil {
		t.Fatal(err)
	}
	if want := []int{5, 10, 15, 20}; !slices.Equal(seen, want) {
		t.Errorf("hook after epochs %v, want %v", seen, want)
	}
	// Stopping after epoch 10 leaves the network a plain 10-epoch Fit gives.
	a, _ := New([]int{1, 8, 1}, rand.New(rand.NewPCG(1, 1)))
	b := a.Clone()
	ta, _ := NewTrainer(a, x, cfg, nil)
	if _, err := ta.FitEach(context.Background(), MSE(y), 5, func(e int) bool { return e < 10 }); err != nil {
		t.Fatal(err)
	}
	c10 := cfg
	c10.Epochs = 10
	if _, err := Fit(context.Background(), b, x, MSE(y), c10, nil); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a.Params, b.Params) {
		t.Error("stopping after 10 epochs differs from 10 epochs of Fit")
	}
	// Evaluate leaves the network alone and allocates nothing, nor does
	// FitEach with a hook that calls it.
	held, _ := NewTrainer(net, randMatrix(r, 20, 1), cfg, nil)
	hy := make([]float64, 20)
	before := slices.Clone(net.Params)
	v1, v2 := held.Evaluate(MSE(hy)), held.Evaluate(MSE(hy))
	if v1 != v2 || !slices.Equal(before, net.Params) {
		t.Error("Evaluate changed the network")
	}
	hl := MSE(hy)
	hook := func(int) bool { held.Evaluate(hl); return true }
	loss := MSE(y)
	if a := testing.AllocsPerRun(5, func() { tr.FitEach(context.Background(), loss, 2, hook) }); a != 0 {
		t.Errorf("%v allocations per FitEach, want 0", a)
	}
}
