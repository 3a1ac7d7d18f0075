package checkmodel

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/internal/nn"
)

// The watcher keeps the count with the lowest held-out objective, the
// smaller one on ties, and stops once patience epochs pass without a new
// minimum or the objective stops being finite.
func TestWatcher(t *testing.T) {
	for _, tc := range []struct {
		name  string
		curve []float64 // after 10, 20, ... epochs
		want  int
		seen  int // measurements before stopping
	}{
		{"falls then rises after 40", []float64{5, 4, 3, 2, 2.5, 3, 4, 5, 6, 7}, 40, 7},
		{"keeps falling", []float64{5, 4, 3, 2, 1}, 50, 5},
		{"tie keeps the earlier", []float64{3, 1, 1, 2}, 20, 4},
		{"NaN stops", []float64{3, 2, math.NaN(), 1}, 20, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := watcher{patience: 30}
			seen := 0
			for i, v := range tc.curve {
				seen++
				if !w.observe(10*(i+1), v) {
					break
				}
			}
			if w.epochs != tc.want || seen != tc.seen {
				t.Errorf("chose %d after %d measurements, want %d after %d", w.epochs, seen, tc.want, tc.seen)
			}
		})
	}
}

// A hand-built case whose held-out objective falls and then rises: a
// linear network h(x) = w x + b starts at w = b = 0 and trains on
// y = 2x, while the held-out rows follow y = x. Adam's steps carry w
// monotonically from 0 towards 2, so the held-out MSE (w - 1)² mean x²
// is lowest where w passes 1 and rises after. The chooser must return
// the multiple of ten where a plain Fit of that many epochs gives the
// lowest held-out MSE, and it lies strictly inside the bound.
func TestChooseEpochsRisingHeldOut(t *testing.T) {
	const n = 21
	x := mat.NewDense(n, 1, nil)
	yt, yh := make([]float64, n), make([]float64, n)
	for i := range n {
		v := -1 + 2*float64(i)/(n-1)
		x.Set(i, 0, v)
		yt[i], yh[i] = 2*v, v
	}
	net := &nn.MLP{Sizes: []int{1, 1}, Params: make([]float64, 2)}
	train := nn.TrainConfig{Epochs: 400, LR: 0.01}
	c, err := chooseEpochs(context.Background(), net.Clone(), x, nn.MSE(yt), x, nn.MSE(yh), train, nil)
	if err != nil {
		t.Fatal(err)
	}
	heldOut := func(epochs int) float64 {
		h := net.Clone()
		cfg := train
		cfg.Epochs = epochs
		if _, err := nn.Fit(context.Background(), h, x, nn.MSE(yt), cfg, nil); err != nil {
			t.Fatal(err)
		}
		tr, _ := nn.NewTrainer(h, x, cfg, nil)
		return tr.Evaluate(nn.MSE(yh))
	}
	best, bestE := math.Inf(1), 0
	var curve []float64
	for e := 10; e <= train.Epochs; e += 10 {
		v := heldOut(e)
		curve = append(curve, v)
		if v < best {
			best, bestE = v, e
		}
	}
	if c.Epochs != bestE || c.HeldOut != best {
		t.Errorf("chose %d epochs (held-out %v), want %d (%v); curve %v", c.Epochs, c.HeldOut, bestE, best, curve)
	}
	if bestE <= 10 || bestE >= train.Epochs || curve[len(curve)-1] < 10*best {
		t.Errorf("the case no longer rises after its minimum at %d: curve %v", bestE, curve)
	}
	if c.Bound != train.Epochs {
		t.Errorf("bound %d, want %d", c.Bound, train.Epochs)
	}
}

// Fit with ValidationEpochs records the chosen count, a multiple of
// ValidationEvery within the bound, gives the same model for the same
// seed, and falls back to the fixed count on fewer than ten rows.
func TestFitValidationEpochs(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const n = 200
	x := mat.NewDense(n, 2, nil)
	y, f := make([]float64, n), make([]float64, n)
	for i := range n {
		a, b := r.NormFloat64(), r.NormFloat64()
		x.Set(i, 0, a)
		x.Set(i, 1, b)
		y[i] = a + 0.5*r.NormFloat64()
		f[i] = 0.8 * a
	}
	cfg := DefaultConfig()
	cfg.Epochs, cfg.Train.Epochs, cfg.Folds = ValidationEpochs, 150, 2
	m1, err := Fit(context.Background(), x, y, f, cfg, 7)
	if err != nil {
		t.Fatal(err)
	}
	m2, _ := Fit(context.Background(), x, y, f, cfg, 7)
	tr := m1.Training
	if tr.EpochSelection != ValidationEpochs || tr.EpochBound != 150 || tr.Epochs < ValidationEvery || tr.Epochs > 150 || tr.Epochs%ValidationEvery != 0 {
		t.Errorf("training record %+v", tr)
	}
	if !slices.Equal(m1.Net.Params, m2.Net.Params) || m1.Training != m2.Training {
		t.Error("same seed, different models")
	}
	// The final network is the fixed-count fit of the chosen count.
	fixed := cfg
	fixed.Epochs, fixed.Train.Epochs = FixedEpochs, tr.Epochs
	m3, err := Fit(context.Background(), x, y, f, fixed, 7)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(m1.Net.Params, m3.Net.Params) || m1.Calibration != m3.Calibration {
		t.Error("validation's final network differs from a fixed fit of the chosen count")
	}
	if m3.Training.EpochSelection != FixedEpochs || m3.Training.EpochBound != 0 {
		t.Errorf("fixed training record %+v", m3.Training)
	}
	// Mini-batches: the held-out rows are still evaluated in one pass.
	mb := cfg
	mb.Train.BatchSize = 32
	if m, err := Fit(context.Background(), x, y, f, mb, 7); err != nil || m.Training.EpochSelection != ValidationEpochs {
		t.Errorf("mini-batch validation: %v", err)
	}
	small, err := Fit(context.Background(), x.Slice(0, 8, 0, 2).(*mat.Dense), y[:8], f[:8], cfg, 7)
	if err != nil {
		t.Fatal(err)
	}
	if small.Training.EpochSelection != FixedEpochs || small.Training.Epochs != 150 {
		t.Errorf("8 rows: training record %+v, want the fixed 150", small.Training)
	}
}

func TestParseEpochSelection(t *testing.T) {
	for in, want := range map[string]EpochSelection{"fixed": FixedEpochs, " Validation ": ValidationEpochs} {
		if got, err := ParseEpochSelection(in); err != nil || got != want {
			t.Errorf("%q: %q, %v", in, got, err)
		}
	}
	if _, err := ParseEpochSelection("auto"); err == nil {
		t.Error("auto accepted")
	}
}
