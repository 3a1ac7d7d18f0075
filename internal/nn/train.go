package nn

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// A Loss evaluates an objective on a batch of network outputs.
//
// rows[i] is the index, in the training matrix, of the sample in batch row
// i, so a loss that holds per-sample targets (in a closure) can find them;
// out holds the outputs, len(rows) x Outputs() row-major. The loss returns
// its value and writes into grad (same shape as out) the gradient of that
// value with respect to every output. The gradient must be of the value as
// returned: a loss that averages over the batch divides its per-sample
// gradients by len(rows).
//
// Passing the whole batch, rather than one sample at a time, lets
// objectives depend on batch statistics, as the K* bound's sign selector
// does; PerSample adapts the common per-sample case.
type Loss func(rows []int, out, grad []float64) float64

// PerSample returns the Loss that averages a per-sample loss over the
// batch. f receives the sample's index and its outputs, returns the
// sample's loss and writes d loss / d output into grad.
func PerSample(f func(i int, out, grad []float64) float64) Loss {
	return func(rows []int, out, grad []float64) float64 {
		k := len(out) / len(rows)
		inv := 1 / float64(len(rows))
		var sum float64
		for r, i := range rows {
			o, g := out[r*k:(r+1)*k], grad[r*k:(r+1)*k]
			sum += f(i, o, g)
			for j := range g {
				g[j] *= inv
			}
		}
		return sum * inv
	}
}

// MSE returns the mean squared error loss of a one-output network against
// targets y: mean over the batch of (out_i - y_i)^2, PyTorch's MSELoss.
func MSE(y []float64) Loss {
	return func(rows []int, out, grad []float64) float64 {
		inv := 1 / float64(len(rows))
		var sum float64
		for r, i := range rows {
			d := out[r] - y[i]
			sum += d * d
			grad[r] = 2 * d * inv
		}
		return sum * inv
	}
}

// TrainConfig sets up training. The zero value of an optional field means
// its default.
type TrainConfig struct {
	Epochs int
	// BatchSize is the mini-batch size; 0 (or >= the number of rows)
	// means full-batch training, one step per epoch. Mini-batches are a
	// fresh random permutation each epoch, the last one possibly smaller,
	// as PyTorch's DataLoader with shuffle=True, drop_last=False.
	BatchSize   int
	LR          float64
	WeightDecay float64
}

// DefaultTrainConfig is the paper's setting: 200 epochs of full-batch Adam
// with learning rate 0.01 and weight decay 1e-3.
func DefaultTrainConfig() TrainConfig {
	return TrainConfig{Epochs: 200, LR: 0.01, WeightDecay: 1e-3}
}

func (c TrainConfig) check() error {
	if c.Epochs < 0 {
		return fmt.Errorf("nn: epochs %d < 0", c.Epochs)
	}
	if c.BatchSize < 0 {
		return fmt.Errorf("nn: batch size %d < 0", c.BatchSize)
	}
	if !(c.LR > 0) || math.IsInf(c.LR, 0) {
		return fmt.Errorf("nn: learning rate %v must be positive and finite", c.LR)
	}
	if !(c.WeightDecay >= 0) || math.IsInf(c.WeightDecay, 0) {
		return fmt.Errorf("nn: weight decay %v must be non-negative and finite", c.WeightDecay)
	}
	return nil
}

// A Trainer trains one network on the rows of one input matrix. Its
// buffers are allocated once, so that training steps allocate nothing.
//
// Fit runs the usual epoch loop; Forward, Backward and Step expose the
// pieces for training several networks jointly on one objective (a mean
// and a variance network, say), where the caller computes the loss from
// all their outputs.
type Trainer struct {
	Net *MLP
	Opt *Adam

	x       blas64.General // all training rows
	cfg     TrainConfig
	rng     *rand.Rand
	ws      *workspace
	in      blas64.General // input rows of the last Forward
	gather  []float64      // gathered mini-batch inputs
	all     []int          // 0..n-1
	perm    []int          // epoch permutation
	rows    []int          // rows of the last Forward
	outGrad []float64      // loss gradient with respect to the outputs
	grad    []float64      // parameter gradient
}

// NewTrainer prepares training of net on the rows of x (n x Inputs()).
// rng drives the mini-batch shuffling; it may be nil for full-batch
// training.
func NewTrainer(net *MLP, x *mat.Dense, cfg TrainConfig, rng *rand.Rand) (*Trainer, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	if err := net.Validate(); err != nil {
		return nil, err
	}
	n, d := x.Dims()
	if d != net.Inputs() {
		return nil, fmt.Errorf("nn: x has %d columns, network has %d inputs", d, net.Inputs())
	}
	batch := cfg.BatchSize
	if batch == 0 || batch > n {
		batch = n
	}
	if batch < n && rng == nil {
		return nil, errors.New("nn: mini-batch training needs a random generator")
	}
	t := &Trainer{
		Net: net, Opt: NewAdam(len(net.Params), cfg.LR, cfg.WeightDecay),
		x: x.RawMatrix(), cfg: cfg, rng: rng,
		ws:      newWorkspace(net.Sizes, n),
		all:     make([]int, n),
		perm:    make([]int, n),
		outGrad: make([]float64, n*net.Outputs()),
		grad:    make([]float64, len(net.Params)),
	}
	for i := range t.all {
		t.all[i] = i
	}
	if batch < n {
		t.gather = make([]float64, batch*d)
	}
	return t, nil
}

// Forward computes the outputs for the given rows of x (all rows, in
// order, when rows is nil) and returns them, len(rows) x Outputs(). The
// returned slice is the trainer's buffer, valid until the next Forward.
// Rows are remembered for Backward.
func (t *Trainer) Forward(rows []int) []float64 {
	if rows == nil {
		rows = t.all
	}
	n := len(rows)
	if n == 0 {
		panic("nn: Trainer.Forward: empty batch")
	}
	if n == len(t.all) && &rows[0] == &t.all[0] {
		t.in = blas64.General{Rows: n, Cols: t.x.Cols, Stride: t.x.Stride, Data: t.x.Data}
	} else {
		d := t.x.Cols
		if cap(t.gather) < n*d {
			t.gather = make([]float64, n*d) // only when a caller passes more rows than the batch size
		}
		g := t.gather[:n*d]
		for r, i := range rows {
			copy(g[r*d:(r+1)*d], t.x.Data[i*t.x.Stride:i*t.x.Stride+d])
		}
		t.in = blas64.General{Rows: n, Cols: d, Stride: d, Data: g}
	}
	t.rows = rows
	out := t.ws.forward(t.Net, t.in)
	return out.Data[:n*out.Cols]
}

// OutputGrad returns a buffer for the gradient with respect to the
// outputs of the last Forward, len(rows) x Outputs(), for a caller that
// computes its own loss.
func (t *Trainer) OutputGrad() []float64 {
	return t.outGrad[:len(t.rows)*t.Net.Outputs()]
}

// Backward computes the parameter gradient of the loss whose gradient with
// respect to the outputs of the last Forward is dOut.
func (t *Trainer) Backward(dOut []float64) {
	t.ws.backward(t.Net, t.in, dOut, t.grad)
}

// Step applies one Adam step with the gradient of the last Backward.
func (t *Trainer) Step() { t.Opt.Step(t.Net.Params, t.grad) }

// Gradient returns the parameter gradient of the last Backward, laid out
// as MLP.Params (the trainer's buffer).
func (t *Trainer) Gradient() []float64 { return t.grad }

// Batch evaluates loss on the given rows (nil: all), back-propagates and
// takes one optimiser step. It returns the loss before the step.
func (t *Trainer) Batch(rows []int, loss Loss) float64 {
	out := t.Forward(rows)
	g := t.OutputGrad()
	v := loss(t.rows, out, g)
	t.Backward(g)
	t.Step()
	return v
}

// Evaluate returns loss on all rows of the trainer's matrix without
// changing the network: a trainer built on held-out rows (and sharing
// the network being trained) measures the held-out objective this way
// without allocating. The gradient loss writes goes to a scratch buffer.
func (t *Trainer) Evaluate(loss Loss) float64 {
	out := t.Forward(nil)
	return loss(t.rows, out, t.OutputGrad())
}

// Epoch runs one epoch: one full-batch step, or one step per shuffled
// mini-batch. It returns the mean of the batch losses.
func (t *Trainer) Epoch(loss Loss) float64 {
	v, _ := t.epoch(context.Background(), loss)
	return v
}

// epoch is Epoch that stops between mini-batches once ctx is done.
func (t *Trainer) epoch(ctx context.Context, loss Loss) (float64, error) {
	n := len(t.all)
	b := t.cfg.BatchSize
	if b == 0 || b >= n {
		return t.Batch(nil, loss), nil
	}
	copy(t.perm, t.all)
	t.rng.Shuffle(n, func(i, j int) { t.perm[i], t.perm[j] = t.perm[j], t.perm[i] })
	var sum float64
	var k int
	for s := 0; s < n; s += b {
		if k > 0 {
			if err := ctx.Err(); err != nil {
				return 0, err
			}
		}
		sum += t.Batch(t.perm[s:min(s+b, n)], loss)
		k++
	}
	return sum / float64(k), nil
}

// Fit trains for cfg.Epochs epochs and returns the loss of the last epoch.
// It stops with an error if the loss becomes NaN or infinite, which with
// a finite objective means the learning rate is too high for the data.
//
// It also stops, with ctx.Err(), once ctx is done: ctx is checked before
// every epoch and between mini-batches, so a cancelled fit returns within
// one optimiser step (a full-batch step over the whole data set is the
// longest wait).
func (t *Trainer) Fit(ctx context.Context, loss Loss) (float64, error) {
	return t.FitEach(ctx, loss, 0, nil)
}

// FitEach is Fit that calls after(e) once every `every` epochs (after
// epochs every, 2 every, ...) with e the number of epochs done, so a
// caller can watch held-out data while training runs, e.g. to choose the
// number of epochs by validation. after runs between epochs, so it sees
// the network as Fit would return it after e epochs; it must not change
// the network's parameters. If it returns false, training stops there
// (early stopping) and FitEach returns the loss of epoch e. A nil after
// or every < 1 is Fit. FitEach itself allocates nothing per epoch.
func (t *Trainer) FitEach(ctx context.Context, loss Loss, every int, after func(epochs int) bool) (float64, error) {
	var v float64
	for e := 0; e < t.cfg.Epochs; e++ {
		if err := ctx.Err(); err != nil {
			return v, err
		}
		var err error
		if v, err = t.epoch(ctx, loss); err != nil {
			return v, err
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return v, fmt.Errorf("nn: loss is %v at epoch %d (learning rate %g too high?)", v, e+1, t.cfg.LR)
		}
		if after != nil && every > 0 && (e+1)%every == 0 && !after(e+1) {
			break
		}
	}
	return v, nil
}

// Fit trains net on the rows of x to minimise loss and returns the loss of
// the last epoch; it stops with ctx.Err() once ctx is done. See Trainer.
func Fit(ctx context.Context, net *MLP, x *mat.Dense, loss Loss, cfg TrainConfig, rng *rand.Rand) (float64, error) {
	t, err := NewTrainer(net, x, cfg, rng)
	if err != nil {
		return 0, err
	}
	return t.Fit(ctx, loss)
}
