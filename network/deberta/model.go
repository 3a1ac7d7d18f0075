package deberta

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/format/weights"
	"github.com/genlens/genlens/internal/tensor/linalg"
	"github.com/genlens/genlens/internal/tensor/simdblas"
	"github.com/genlens/genlens/internal/text/bpe"
	"github.com/genlens/genlens/network/internal/transformer"
	"github.com/genlens/genlens/network/nli"
)

type layer struct {
	qkv      transformer.Linear // rows: all queries (scaled), all keys, all values
	pk, pq   []float32          // H × 2M: position keys, position queries (scaled)
	out      transformer.Linear
	ln1, ln2 transformer.Norm
	fc1, fc2 transformer.Linear
}

// Model is a DeBERTa sequence classifier with its tokenizer. It is safe
// for concurrent use.
type Model struct {
	cfg       Config
	file      string // the weights, named in errors
	name      string
	tok       *bpe.Tokenizer
	cls, sep  int
	word      []float32 // Vocab × Hidden
	pos, typ  []float32 // absolute positions and token types, nil if unused
	lnEmb     transformer.Norm
	layers    []layer
	pooler    transformer.Linear
	classifer transformer.Linear
}

// Config returns the model's configuration.
func (m *Model) Config() Config { return m.cfg }

// Name identifies the model and its weights.
func (m *Model) Name() string { return m.name }

// Open loads a model directory: config.json, vocab.json, merges.txt and
// model.safetensors or else pytorch_model.bin. name prefixes the weights'
// SHA-256 in Name.
func Open(dir, name string) (*Model, error) {
	cfg, err := LoadConfig(filepath.Join(dir, "config.json"))
	if err != nil {
		return nil, err
	}
	tok, err := bpe.Load(filepath.Join(dir, "vocab.json"), filepath.Join(dir, "merges.txt"), "[UNK]")
	if err != nil {
		return nil, err
	}
	wpath := filepath.Join(dir, "model.safetensors")
	if _, err := os.Stat(wpath); err != nil {
		wpath = filepath.Join(dir, "pytorch_model.bin")
	}
	sd, err := weights.Load(wpath)
	if err != nil {
		return nil, err
	}
	sum, err := transformer.FileSHA256(wpath)
	if err != nil {
		return nil, err
	}
	return New(wpath, name+" sha256:"+sum, cfg, tok, sd)
}

// New builds the model from a state dict with Hugging Face's key names;
// file names the weights in errors, name identifies them in Name. A
// missing tensor, a wrong shape, a NaN or ±Inf value or LayerNorm
// weights with which the norm could overflow float32 is a one-line
// *fault.InputError naming the file and the tensor (transformer.Loader).
func New(file, name string, cfg Config, tok *bpe.Tokenizer, sd map[string]*weights.Tensor) (*Model, error) {
	l := &transformer.Loader{File: file, Tensors: sd, Hint: "not DeBERTa sequence-classification weights of this config?"}
	// A config of LoadConfig has passed this; one built otherwise must
	// too, or the head width below divides by zero.
	if err := transformer.CheckHeads(file, "num_attention_heads", cfg.Hidden, cfg.Heads); err != nil {
		return nil, err
	}
	H, M, eps := cfg.Hidden, cfg.MaxRelative, float32(cfg.Eps)
	m := &Model{cfg: cfg, file: file, name: name, tok: tok}
	var err error
	for _, s := range []struct {
		tok string
		id  *int
	}{{"[CLS]", &m.cls}, {"[SEP]", &m.sep}} {
		ids := tok.Special(s.tok)
		if ids < 0 || ids >= cfg.Vocab {
			return nil, &fault.InputError{File: "vocab.json", Key: s.tok, Msg: fmt.Sprintf("missing or outside the %d-token vocabulary of config.json", cfg.Vocab)}
		}
		*s.id = ids
	}
	if m.word, err = l.Tensor("deberta.embeddings.word_embeddings.weight", cfg.Vocab, H); err != nil {
		return nil, err
	}
	if cfg.PositionBiased {
		if m.pos, err = l.Tensor("deberta.embeddings.position_embeddings.weight", cfg.MaxPositions, H); err != nil {
			return nil, err
		}
	}
	if cfg.TypeVocab > 0 {
		if m.typ, err = l.Tensor("deberta.embeddings.token_type_embeddings.weight", cfg.TypeVocab, H); err != nil {
			return nil, err
		}
	}
	if m.lnEmb, err = l.Norm("deberta.embeddings.LayerNorm", H, eps); err != nil {
		return nil, err
	}
	rel, err := l.Tensor("deberta.encoder.rel_embeddings.weight", 2*M, H)
	if err != nil {
		return nil, err
	}
	dh := H / cfg.Heads
	scale := float32(1 / math.Sqrt(float64(dh*3)))
	for i := 0; i < cfg.Layers; i++ {
		p := "deberta.encoder.layer." + strconv.Itoa(i) + "."
		var y layer
		inW, err := l.Tensor(p+"attention.self.in_proj.weight", 3*H, H)
		if err != nil {
			return nil, err
		}
		qb, err := l.Tensor(p+"attention.self.q_bias", H)
		if err != nil {
			return nil, err
		}
		vb, err := l.Tensor(p+"attention.self.v_bias", H)
		if err != nil {
			return nil, err
		}
		// in_proj keeps each head's q, k and v rows together; regroup
		// them as all queries, all keys, all values, the queries (and
		// their bias) times the attention scale.
		y.qkv = transformer.Linear{In: H, Out: 3 * H, W: make([]float32, 3*H*H), B: make([]float32, 3*H)}
		for h := 0; h < cfg.Heads; h++ {
			for part := 0; part < 3; part++ {
				for d := 0; d < dh; d++ {
					src := inW[((3*h+part)*dh+d)*H:][:H]
					r := part*H + h*dh + d
					dst := y.qkv.W[r*H:][:H]
					f := float32(1)
					if part == 0 {
						f = scale
					}
					for j, v := range src {
						dst[j] = v * f
					}
					switch part {
					case 0:
						y.qkv.B[r] = qb[h*dh+d] * scale
					case 2:
						y.qkv.B[r] = vb[h*dh+d]
					}
				}
			}
		}
		pk, err := l.LinearNoBias(p+"attention.self.pos_proj", H, H)
		if err != nil {
			return nil, err
		}
		pq, err := l.Linear(p+"attention.self.pos_q_proj", H, H)
		if err != nil {
			return nil, err
		}
		// The position projections depend on the weights alone: H × 2M
		// each, computed once here.
		relT := transpose(rel, 2*M, H)
		y.pk = make([]float32, H*2*M)
		pk.Mul(relT, 2*M, 2*M, y.pk, 2*M, false, 1)
		y.pq = make([]float32, H*2*M)
		pq.Mul(relT, 2*M, 2*M, y.pq, 2*M, false, 1)
		for i := range y.pq {
			y.pq[i] *= scale
		}
		if y.out, err = l.Linear(p+"attention.output.dense", H, H); err != nil {
			return nil, err
		}
		if y.ln1, err = l.Norm(p+"attention.output.LayerNorm", H, eps); err != nil {
			return nil, err
		}
		if y.fc1, err = l.Linear(p+"intermediate.dense", cfg.Intermediate, H); err != nil {
			return nil, err
		}
		if y.fc2, err = l.Linear(p+"output.dense", H, cfg.Intermediate); err != nil {
			return nil, err
		}
		if y.ln2, err = l.Norm(p+"output.LayerNorm", H, eps); err != nil {
			return nil, err
		}
		y.qkv.Pack()
		y.out.Pack()
		y.fc1.Pack()
		y.fc2.Pack()
		m.layers = append(m.layers, y)
	}
	if m.pooler, err = l.Linear("pooler.dense", H, H); err != nil {
		return nil, err
	}
	if m.classifer, err = l.Linear("classifier", 3, H); err != nil {
		return nil, err
	}
	return m, nil
}

func transpose(a []float32, rows, cols int) []float32 {
	t := make([]float32, len(a))
	for i := 0; i < rows; i++ {
		for j := 0; j < cols; j++ {
			t[j*rows+i] = a[i*cols+j]
		}
	}
	return t
}

// Encode returns the ids of a pair as the model reads it,
// [CLS] premise [SEP] hypothesis [SEP], cut to the model's maximum
// length by taking tokens off the end of the longer text (the
// hypothesis when they are as long), as Hugging Face's longest_first
// truncation does.
func (m *Model) Encode(p nli.Pair) []int {
	a, b := m.tok.Encode(p.Premise), m.tok.Encode(p.Hypothesis)
	for len(a)+len(b)+3 > m.cfg.MaxPositions && len(a)+len(b) > 0 {
		if len(a) > len(b) {
			a = a[:len(a)-1]
		} else {
			b = b[:len(b)-1]
		}
	}
	ids := make([]int, 0, len(a)+len(b)+3)
	ids = append(ids, m.cls)
	ids = append(ids, a...)
	ids = append(ids, m.sep)
	ids = append(ids, b...)
	return append(ids, m.sep)
}

// Classify implements nli.Model: the softmax of each pair's logits, in
// nli.Label order.
func (m *Model) Classify(ctx context.Context, pairs []nli.Pair) ([][3]float64, error) {
	seqs := make([][]int, len(pairs))
	for i, p := range pairs {
		seqs[i] = m.Encode(p)
	}
	logits, err := m.Logits(ctx, seqs)
	if err != nil {
		return nil, err
	}
	out := make([][3]float64, len(pairs))
	for i, lg := range logits {
		mx := math.Inf(-1)
		for _, v := range lg {
			mx = math.Max(mx, float64(v))
		}
		var e [3]float64
		var s float64
		for r, v := range lg {
			e[r] = math.Exp(float64(v) - mx)
			s += e[r]
		}
		for r := range e {
			out[i][m.cfg.Labels[r]] = e[r] / s
		}
	}
	return out, nil
}

// Logits runs the network on token-id sequences (each with its special
// tokens, token types 0 before the first [SEP] and 1 after) and returns
// the classifier's three logits per sequence, in the config's order. A
// logit that is not finite (weights large enough to overflow float32) is
// an error naming the weights.
func (m *Model) Logits(ctx context.Context, seqs [][]int) ([][3]float32, error) {
	c := m.cfg
	H := c.Hidden
	n := 0
	for i, s := range seqs {
		if len(s) == 0 || len(s) > c.MaxPositions {
			return nil, fmt.Errorf("deberta: sequence %d has %d tokens, want 1 to %d", i, len(s), c.MaxPositions)
		}
		for _, id := range s {
			if id < 0 || id >= c.Vocab {
				return nil, fmt.Errorf("deberta: sequence %d has token id %d outside the vocabulary of %d", i, id, c.Vocab)
			}
		}
		n += len(s)
	}
	// Embeddings, one column per token of all the sequences.
	x := make([]float32, H*n)
	col := 0
	for _, s := range seqs {
		seg := 0
		for t, id := range s {
			for r := 0; r < H; r++ {
				v := m.word[id*H+r]
				if m.pos != nil {
					v += m.pos[t*H+r]
				}
				if m.typ != nil {
					v += m.typ[min(seg, c.TypeVocab-1)*H+r]
				}
				x[r*n+col] = v
			}
			if id == m.sep {
				seg = 1
			}
			col++
		}
	}
	m.lnEmb.Cols(x, n, x)
	qkv := make([]float32, 3*H*n)
	att := make([]float32, H*n)
	u := make([]float32, c.Intermediate*n)
	for li := range m.layers {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		y := &m.layers[li]
		y.qkv.Mul(x, n, n, qkv, n, false, 1)
		off := 0
		for _, s := range seqs {
			m.attention(y, qkv, n, off, len(s), att)
			off += len(s)
		}
		y.out.Mul(att, n, n, x, n, true, 1)
		y.ln1.Cols(x, n, x)
		y.fc1.Mul(x, n, n, u, n, false, 1)
		simdblas.GELU(u)
		y.fc2.Mul(u, n, n, x, n, true, 1)
		y.ln2.Cols(x, n, x)
	}
	// Pooler on each first token, then the classifier.
	B := len(seqs)
	first := make([]float32, H*B)
	off := 0
	for b, s := range seqs {
		for r := 0; r < H; r++ {
			first[r*B+b] = x[r*n+off]
		}
		off += len(s)
	}
	pooled := make([]float32, H*B)
	m.pooler.Mul(first, B, B, pooled, B, false, 1)
	simdblas.GELU(pooled)
	lg := make([]float32, 3*B)
	m.classifer.Mul(pooled, B, B, lg, B, false, 1)
	out := make([][3]float32, B)
	for b := range out {
		for r := 0; r < 3; r++ {
			out[b][r] = lg[r*B+b]
		}
		if err := transformer.CheckOutput(m.file, b, out[b][:]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// attention computes the disentangled attention of the L tokens in
// columns off… of qkv into the same columns of att.
func (m *Model) attention(y *layer, qkv []float32, n, off, L int, att []float32) {
	c := m.cfg
	H, M := c.Hidden, c.MaxRelative
	dh := H / c.Heads
	// Relative rows in use: δ = clamp(M + i − j) for |i − j| < L.
	lo, hi := max(0, M-L+1), min(2*M-1, M+L-1)
	w := hi - lo + 1
	s := make([]float32, L*L)
	c2p := make([]float32, L*w)
	p2c := make([]float32, L*w)
	ctx := make([]float32, dh*L)
	for h := 0; h < c.Heads; h++ {
		q := qkv[(h*dh)*n+off:]
		k := qkv[(H+h*dh)*n+off:]
		v := qkv[(2*H+h*dh)*n+off:]
		linalg.Sgemm(true, false, L, L, dh, 1, q, n, k, n, 0, s, L)
		linalg.Sgemm(true, false, L, w, dh, 1, q, n, y.pk[h*dh*2*M+lo:], 2*M, 0, c2p, w)
		linalg.Sgemm(true, false, L, w, dh, 1, k, n, y.pq[h*dh*2*M+lo:], 2*M, 0, p2c, w)
		for i := 0; i < L; i++ {
			row := s[i*L:][:L]
			mx := float32(math.Inf(-1))
			for j := range row {
				d := min(max(M+i-j, 0), 2*M-1) - lo
				row[j] += c2p[i*w+d] + p2c[j*w+d]
				mx = max(mx, row[j])
			}
			var sum float64
			for j, v := range row {
				e := float32(math.Exp(float64(v - mx)))
				row[j] = e
				sum += float64(e)
			}
			inv := float32(1 / sum)
			for j := range row {
				row[j] *= inv
			}
		}
		// ctx = V·Sᵀ: dh × L.
		linalg.Sgemm(false, true, dh, L, L, 1, v, n, s, L, 0, ctx, L)
		for d := 0; d < dh; d++ {
			copy(att[(h*dh+d)*n+off:][:L], ctx[d*L:][:L])
		}
	}
}
