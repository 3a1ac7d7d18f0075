package bert

import (
	"context"
	"fmt"
	"math"

	"github.com/genlens/genlens/internal/tensor/linalg"
	"github.com/genlens/genlens/internal/tensor/par"
	"github.com/genlens/genlens/internal/tensor/simdblas"
	"github.com/genlens/genlens/internal/text/wordpiece"
)

func sqrt(x float64) float64 { return math.Sqrt(x) }

// States are the last hidden states of a batch of sequences: Hidden rows
// by the tokens of all the sequences side by side (sequence-major).
type States struct {
	X      []float32
	Hidden int
	// Off[i] is the first column of sequence i, Off[len] the total.
	Off []int
}

// Token returns the state of token t of sequence i into dst.
func (s *States) Token(i, t int, dst []float32) {
	n := s.Off[len(s.Off)-1]
	for r := range dst[:s.Hidden] {
		dst[r] = s.X[r*n+s.Off[i]+t]
	}
}

// Mean returns the mean of the states of every token of sequence i (the
// attention mask is all ones over its tokens: there are no pad columns).
func (s *States) Mean(i int) []float32 {
	n := s.Off[len(s.Off)-1]
	a, b := s.Off[i], s.Off[i+1]
	out := make([]float32, s.Hidden)
	for r := range out {
		var sum float64
		for _, v := range s.X[r*n+a : r*n+b] {
			sum += float64(v)
		}
		out[r] = float32(sum / float64(b-a))
	}
	return out
}

// Check returns an error if an encoding does not fit the model: longer
// than max_position_embeddings, or an id or token type out of range.
func (m *Model) Check(encs []wordpiece.Encoding) error {
	for i, e := range encs {
		if len(e.IDs) == 0 || len(e.IDs) > m.cfg.MaxPositions || len(e.Types) != len(e.IDs) {
			return fmt.Errorf("bert: sequence %d has %d ids and %d types, want 1 to %d of each", i, len(e.IDs), len(e.Types), m.cfg.MaxPositions)
		}
		for t, id := range e.IDs {
			if id < 0 || int(id) >= m.cfg.VocabSize {
				return fmt.Errorf("bert: sequence %d token %d is id %d, outside the vocabulary of %d", i, t, id, m.cfg.VocabSize)
			}
			if ty := e.Types[t]; ty < 0 || int(ty) >= m.cfg.TypeVocab {
				return fmt.Errorf("bert: sequence %d token %d has type %d, want below %d", i, t, ty, m.cfg.TypeVocab)
			}
		}
	}
	return nil
}

// groupColumns is about the number of token columns a group of
// sequences runs with, wide enough for the products, small enough that
// the activations stay in cache.
const groupColumns = 512

// Run runs the encoder on a batch of encodings, its groups of sequences
// on up to workers goroutines (<= 0: one per CPU), and calls f with each
// group's states and the index of its first sequence. The states of a
// sequence do not depend on the batch it came in.
func (m *Model) Run(ctx context.Context, encs []wordpiece.Encoding, workers int, f func(first int, s *States)) error {
	if err := m.Check(encs); err != nil {
		return err
	}
	var groups [][2]int
	for i := 0; i < len(encs); {
		j, cols := i, 0
		for j < len(encs) && (j == i || cols+len(encs[j].IDs) <= groupColumns) {
			cols += len(encs[j].IDs)
			j++
		}
		groups = append(groups, [2]int{i, j})
		i = j
	}
	return par.For(ctx, len(groups), workers, func(ctx context.Context, g int) error {
		s, err := m.group(ctx, encs[groups[g][0]:groups[g][1]])
		if err != nil {
			return err
		}
		f(groups[g][0], s)
		return nil
	})
}

// group runs a few sequences through the encoder, their tokens as the
// columns of every activation, so each linear layer is one product W·X.
func (m *Model) group(ctx context.Context, encs []wordpiece.Encoding) (*States, error) {
	c := m.cfg
	W, I := c.Hidden, c.Intermediate
	off := make([]int, len(encs)+1)
	for i, e := range encs {
		off[i+1] = off[i] + len(e.IDs)
	}
	n := off[len(encs)]
	x := make([]float32, W*n)
	for i, e := range encs {
		for t, id := range e.IDs {
			col := off[i] + t
			wr, pr, tr := m.word[int(id)*W:][:W], m.pos[t*W:][:W], m.typ[int(e.Types[t])*W:][:W]
			for r := range W {
				x[r*n+col] = wr[r] + tr[r] + pr[r]
			}
		}
	}
	m.embLN.Cols(x, n, x)
	h := make([]float32, W*n)
	qkv := make([]float32, 3*W*n)
	u := make([]float32, max(I, W)*n)
	for li := range m.layers {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		ly := &m.layers[li]
		ly.qkv.Mul(x, n, n, qkv, n, false, 1)
		m.attention(qkv, off, h)
		ly.proj.Mul(h, n, n, u[:W*n], n, false, 1)
		addInto(x, u[:W*n])
		ly.ln1.Cols(x, n, x)
		ly.fc1.Mul(x, n, n, u, n, false, 1)
		simdblas.GELU(u)
		ly.fc2.Mul(u, n, n, h, n, false, 1)
		addInto(x, h)
		ly.ln2.Cols(x, n, x)
	}
	return &States{X: x, Hidden: W, Off: off}, nil
}

// addInto sets x += y.
func addInto(x, y []float32) {
	y = y[:len(x)]
	for i := range x {
		x[i] += y[i]
	}
}

// attention computes softmax(QKᵀ)V of every sequence and head from qkv
// (3·Hidden rows: queries already scaled, keys, values) into att, each
// sequence attending to its own tokens only: what the attention mask of
// a padded batch does.
func (m *Model) attention(qkv []float32, off []int, att []float32) {
	c := m.cfg
	W, heads := c.Hidden, c.Heads
	dh := W / heads
	n := off[len(off)-1]
	var s, o []float32
	var sum []float64
	for b := 0; b+1 < len(off); b++ {
		a, T := off[b], off[b+1]-off[b]
		if len(s) < T*T {
			s = make([]float32, T*T)
			o = make([]float32, dh*T)
			sum = make([]float64, T)
		}
		for hd := range heads {
			q := qkv[hd*dh*n+a:]
			k := qkv[(W+hd*dh)*n+a:]
			v := qkv[(2*W+hd*dh)*n+a:]
			sc := s[:T*T]
			// keys × queries
			linalg.Sgemm(true, false, T, T, dh, 1, k, n, q, n, 0, sc, T)
			for i := range T {
				mx := sc[i]
				for j := 1; j < T; j++ {
					mx = max(mx, sc[j*T+i])
				}
				var z float64
				for j := range T {
					e := math.Exp(float64(sc[j*T+i] - mx))
					sc[j*T+i] = float32(e)
					z += e
				}
				sum[i] = z
			}
			oo := o[:dh*T]
			linalg.Sgemm(false, false, dh, T, T, 1, v, n, sc, T, 0, oo, T)
			for d := range dh {
				dst := att[(hd*dh+d)*n+a:][:T]
				for i, val := range oo[d*T : (d+1)*T] {
					dst[i] = float32(float64(val) / sum[i])
				}
			}
		}
	}
}
