package checkmodel

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/internal/nn"
)

// EpochSelection says how the number of training epochs of a check
// network is chosen.
type EpochSelection string

const (
	// FixedEpochs trains for Train.Epochs epochs, the paper's setting
	// (200).
	FixedEpochs EpochSelection = "fixed"
	// ValidationEpochs holds out ValidationFraction of the rows (drawn
	// from the fit's seed), trains on the rest for at most Train.Epochs
	// epochs, measures the objective on the held-out rows every
	// ValidationEvery epochs and keeps the count where it was lowest;
	// the networks (final and cross-fitting) are then trained on all
	// rows for that count.
	ValidationEpochs EpochSelection = "validation"
)

// ParseEpochSelection accepts "fixed" and "validation", in any case.
func ParseEpochSelection(s string) (EpochSelection, error) {
	switch e := EpochSelection(strings.ToLower(strings.TrimSpace(s))); e {
	case FixedEpochs, ValidationEpochs:
		return e, nil
	}
	return "", fmt.Errorf("checkmodel: unknown epoch selection %q (want fixed or validation)", s)
}

const (
	// ValidationFraction is the share of rows held out to choose the
	// number of epochs.
	ValidationFraction = 0.2
	// ValidationEvery is how often, in epochs, the held-out objective
	// is measured: the chosen count is a multiple of it.
	ValidationEvery = 10
	// validationPatience stops the search once the held-out objective
	// has not improved for this many measurements: past its minimum it
	// seldom returns below it, and the rest of the bound would be spent
	// for nothing.
	validationPatience = 10
)

// EpochChoice records how a check model's epochs were chosen.
type EpochChoice struct {
	// Epochs is the count chosen.
	Epochs int
	// Bound is the largest count considered (Train.Epochs).
	Bound int
	// HeldOut is the objective on the held-out rows after Epochs
	// epochs, in the units the network was trained in.
	HeldOut float64
	// Rows is the number of held-out rows.
	Rows int
}

// ChooseEpochs chooses the number of epochs of cfg's check network by
// validation on x, y and f (see ValidationEpochs): rng deals the
// held-out rows and draws the trial network. It needs at least 10 rows
// (two held out). It returns cfg with Train.Epochs set to the choice
// (cfg.Epochs unchanged).
func ChooseEpochs(ctx context.Context, x *mat.Dense, y, f []float64, cfg Config, rng *rand.Rand) (Config, EpochChoice, error) {
	if err := checkXYF(x, y, f); err != nil {
		return cfg, EpochChoice{}, err
	}
	n, d := x.Dims()
	nh := int(math.Round(ValidationFraction * float64(n)))
	if nh < 2 || n-nh < 2 {
		return cfg, EpochChoice{}, fmt.Errorf("checkmodel: %d rows are too few to choose epochs by validation (need 10)", n)
	}
	perm := rng.Perm(n)
	xh, yh, fh := subset(x, y, f, perm[:nh])
	xt, yt, ft := subset(x, y, f, perm[nh:])
	loss, err := Loss(cfg.Objective, yt, ft, cfg.Lambda, cfg.Eps)
	if err != nil {
		return cfg, EpochChoice{}, err
	}
	held, err := Loss(cfg.Objective, yh, fh, cfg.Lambda, cfg.Eps)
	if err != nil {
		return cfg, EpochChoice{}, err
	}
	h, err := nn.New(cfg.sizes(d), rng)
	if err != nil {
		return cfg, EpochChoice{}, err
	}
	c, err := chooseEpochs(ctx, h, xt, loss, xh, held, cfg.Train, rng)
	if err != nil {
		return cfg, EpochChoice{}, fmt.Errorf("checkmodel: choosing epochs: %w", err)
	}
	c.Rows = nh
	cfg.Train.Epochs = c.Epochs
	return cfg, c, nil
}

// chooseEpochs trains net on xt with loss for at most train.Epochs
// epochs and returns the multiple of ValidationEvery after which held,
// measured on xh, was lowest (the bound itself when it is below
// ValidationEvery).
func chooseEpochs(ctx context.Context, net *nn.MLP, xt *mat.Dense, loss nn.Loss, xh *mat.Dense, held nn.Loss, train nn.TrainConfig, rng *rand.Rand) (EpochChoice, error) {
	c := EpochChoice{Epochs: train.Epochs, Bound: train.Epochs, HeldOut: math.Inf(1)}
	if train.Epochs < ValidationEvery {
		return c, nil
	}
	tr, err := nn.NewTrainer(net, xt, train, rng)
	if err != nil {
		return c, err
	}
	full := train
	full.BatchSize = 0 // the evaluator takes no steps: one pass over all held-out rows
	ev, err := nn.NewTrainer(net, xh, full, nil)
	if err != nil {
		return c, err
	}
	w := watcher{patience: validationPatience * ValidationEvery}
	if _, err := tr.FitEach(ctx, loss, ValidationEvery, func(e int) bool { return w.observe(e, ev.Evaluate(held)) }); err != nil {
		return c, err
	}
	if w.epochs == 0 {
		return c, fmt.Errorf("held-out objective is not finite")
	}
	c.Epochs, c.HeldOut = w.epochs, w.best
	return c, nil
}

// watcher keeps the epoch count with the lowest held-out objective.
type watcher struct {
	patience int // epochs without improvement before stopping
	epochs   int // best count so far (0: none)
	best     float64
}

// observe records the held-out objective v after e epochs and reports
// whether training should go on. Ties keep the smaller count.
func (w *watcher) observe(e int, v float64) bool {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return false
	}
	if w.epochs == 0 || v < w.best {
		w.epochs, w.best = e, v
	}
	return e-w.epochs < w.patience
}

// resolveEpochs returns cfg with a fixed count: with ValidationEpochs and
// at least ten rows the count ChooseEpochs picks (drawing from rng), and
// the choice; otherwise Train.Epochs as it is, and a zero choice.
func resolveEpochs(ctx context.Context, x *mat.Dense, y, f []float64, cfg Config, rng *rand.Rand) (Config, EpochChoice, error) {
	sel := cfg.Epochs
	cfg.Epochs = FixedEpochs
	if n, _ := x.Dims(); sel != ValidationEpochs || n < 10 {
		return cfg, EpochChoice{}, nil
	}
	return ChooseEpochs(ctx, x, y, f, cfg, rng)
}
