package bert

import (
	"context"
	"fmt"
	"math"
	"path/filepath"

	"github.com/genlens/genlens/internal/text/wordpiece"
	"github.com/genlens/genlens/network/internal/transformer"
	"github.com/genlens/genlens/network/nli"
)

// Classifier is a BERT cross-encoder trained for natural language
// inference (BertForSequenceClassification): the pooler (dense and tanh
// on [CLS]) and a three-way classifier whose outputs config.json's
// id2label names.
type Classifier struct {
	m       *Model
	order   [3]nli.Label // order[i] is the label of output i
	name    string
	workers int
}

var _ nli.Model = (*Classifier)(nil)

// LoadClassifier reads a cross-encoder's directory; name identifies it
// and its weights in caches and reports.
func LoadClassifier(dir, name string, workers int) (*Classifier, error) {
	m, err := Load(dir, true)
	if err != nil {
		return nil, err
	}
	return NewClassifier(m, filepath.Join(dir, "config.json"), name, workers)
}

// NewClassifier makes a loaded sequence classifier an nli.Model; config
// names its config.json in errors.
func NewClassifier(m *Model, config, name string, workers int) (*Classifier, error) {
	if m.classifier == nil {
		return nil, fmt.Errorf("bert: %s: the model was loaded without its classifier", config)
	}
	order, err := m.cfg.labelOrder(config)
	if err != nil {
		return nil, err
	}
	if m.classifier.Out != 3 {
		return nil, fmt.Errorf("bert: %s: the classifier has %d outputs, id2label 3", config, m.classifier.Out)
	}
	return &Classifier{m: m, order: order, name: name, workers: workers}, nil
}

// Name identifies the model.
func (c *Classifier) Name() string { return c.name }

// Logits returns the classifier's outputs for pairs, in the model's own
// order; a logit that is not finite (weights large enough to overflow
// float32) is an error naming the weights.
func (c *Classifier) Logits(ctx context.Context, pairs []nli.Pair) ([][]float32, error) {
	m := c.m
	encs := make([]wordpiece.Encoding, len(pairs))
	for i, p := range pairs {
		encs[i] = m.tok.EncodePair(p.Premise, p.Hypothesis, m.cfg.MaxPositions)
	}
	W := m.cfg.Hidden
	out := make([][]float32, len(pairs))
	err := m.Run(ctx, encs, c.workers, func(first int, s *States) {
		k := len(s.Off) - 1
		cls := make([]float32, W*k) // W × k, a column per pair
		tok := make([]float32, W)
		for i := range k {
			s.Token(i, 0, tok)
			for r := range W {
				cls[r*k+i] = tok[r]
			}
		}
		pooled := make([]float32, W*k)
		m.pooler.Mul(cls, k, k, pooled, k, false, 1)
		for i, v := range pooled {
			pooled[i] = float32(math.Tanh(float64(v)))
		}
		nl := m.classifier.Out
		logits := make([]float32, nl*k)
		m.classifier.Mul(pooled, k, k, logits, k, false, 1)
		for i := range k {
			row := make([]float32, nl)
			for l := range nl {
				row[l] = logits[l*k+i]
			}
			out[first+i] = row
		}
	})
	if err != nil {
		return nil, err
	}
	if err := transformer.CheckOutputs(m.file, out); err != nil {
		return nil, err
	}
	return out, nil
}

// Classify returns the probabilities of the three labels of every pair,
// indexed by nli.Label.
func (c *Classifier) Classify(ctx context.Context, pairs []nli.Pair) ([][3]float64, error) {
	lg, err := c.Logits(ctx, pairs)
	if err != nil {
		return nil, err
	}
	out := make([][3]float64, len(lg))
	for i, row := range lg {
		mx := math.Inf(-1)
		for _, v := range row {
			mx = max(mx, float64(v))
		}
		var z float64
		for _, v := range row {
			z += math.Exp(float64(v) - mx)
		}
		for j, v := range row {
			out[i][c.order[j]] = math.Exp(float64(v)-mx) / z
		}
	}
	return out, nil
}
