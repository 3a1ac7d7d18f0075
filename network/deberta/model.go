package deberta

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/format/weights"
	"github.com/genlens/genlens/internal/tensor/linalg"
	"github.com/genlens/genlens/internal/tensor/simdblas"
	"github.com/genlens/genlens/internal/text/bpe"
	"github.com/genlens/genlens/network/nli"
)

// linear is y = W·x + b, W out×in as nn.Linear keeps it, packed for the
// SIMD kernel where it runs.
type linear struct {
	in, out int
	w, b    []float32
	pw      *simdblas.Packed
}

func (l *linear) pack() {
	if linalg.SgemmKernel() {
		l.pw = simdblas.Pack(l.out, l.in, l.w, l.in)
		l.w = nil
	}
}

// apply writes (or with add, adds) W·X + b for the n columns of x into c.
func (l *linear) apply(x []float32, n int, c []float32, add bool) {
	for r := 0; r < l.out; r++ {
		row := c[r*n:][:n]
		var b float32
		if l.b != nil {
			b = l.b[r]
		}
		for j := range row {
			if add {
				row[j] += b
			} else {
				row[j] = b
			}
		}
	}
	if l.pw != nil {
		simdblas.MulAddPacked(l.pw, n, x, n, c, n)
		return
	}
	linalg.Sgemm(false, false, l.out, n, l.in, 1, l.w, l.in, x, n, 1, c, n)
}

type norm struct{ g, b []float32 }

type layer struct {
	qkv      linear    // rows: all queries (scaled), all keys, all values
	pk, pq   []float32 // H × 2M: position keys, position queries (scaled)
	out      linear
	ln1, ln2 norm
	fc1, fc2 linear
}

// Model is a DeBERTa sequence classifier with its tokenizer. It is safe
// for concurrent use.
type Model struct {
	cfg       Config
	name      string
	tok       *bpe.Tokenizer
	cls, sep  int
	word      []float32 // Vocab × Hidden
	pos, typ  []float32 // absolute positions and token types, nil if unused
	lnEmb     norm
	layers    []layer
	pooler    linear
	classifer linear
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
	sum, err := fileSHA256(wpath)
	if err != nil {
		return nil, err
	}
	return New(wpath, name+" sha256:"+sum, cfg, tok, sd)
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", &fault.InputError{File: path, Msg: "cannot read weights", Err: err}
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", &fault.InputError{File: path, Msg: "cannot read weights", Err: err}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

type loader struct {
	file string
	sd   map[string]*weights.Tensor
}

func (l *loader) get(key string, shape ...int) ([]float32, error) {
	t, ok := l.sd[key]
	if !ok {
		return nil, &fault.InputError{File: l.file, Key: key, Msg: "missing from the state dict (not DeBERTa sequence-classification weights of this config?)"}
	}
	if len(t.Shape) != len(shape) {
		return nil, &fault.InputError{File: l.file, Key: key, Msg: fmt.Sprintf("has shape %v, want %v", t.Shape, shape)}
	}
	for i := range shape {
		if t.Shape[i] != shape[i] {
			return nil, &fault.InputError{File: l.file, Key: key, Msg: fmt.Sprintf("has shape %v, want %v", t.Shape, shape)}
		}
	}
	for i, v := range t.Data {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return nil, &fault.InputError{File: l.file, Key: key, Msg: fmt.Sprintf("element %d is %v", i, v)}
		}
	}
	return t.Data, nil
}

func (l *loader) lin(key string, out, in int, bias bool) (linear, error) {
	li := linear{in: in, out: out}
	var err error
	if li.w, err = l.get(key+".weight", out, in); err != nil {
		return li, err
	}
	if bias {
		li.b, err = l.get(key+".bias", out)
	}
	return li, err
}

func (l *loader) norm(key string, w int) (norm, error) {
	g, err := l.get(key+".weight", w)
	if err != nil {
		return norm{}, err
	}
	b, err := l.get(key+".bias", w)
	return norm{g, b}, err
}

// New builds the model from a state dict with Hugging Face's key names;
// file names the weights in errors, name identifies them in Name.
func New(file, name string, cfg Config, tok *bpe.Tokenizer, sd map[string]*weights.Tensor) (*Model, error) {
	l := &loader{file: file, sd: sd}
	H, M := cfg.Hidden, cfg.MaxRelative
	m := &Model{cfg: cfg, name: name, tok: tok}
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
	if m.word, err = l.get("deberta.embeddings.word_embeddings.weight", cfg.Vocab, H); err != nil {
		return nil, err
	}
	if cfg.PositionBiased {
		if m.pos, err = l.get("deberta.embeddings.position_embeddings.weight", cfg.MaxPositions, H); err != nil {
			return nil, err
		}
	}
	if cfg.TypeVocab > 0 {
		if m.typ, err = l.get("deberta.embeddings.token_type_embeddings.weight", cfg.TypeVocab, H); err != nil {
			return nil, err
		}
	}
	if m.lnEmb, err = l.norm("deberta.embeddings.LayerNorm", H); err != nil {
		return nil, err
	}
	rel, err := l.get("deberta.encoder.rel_embeddings.weight", 2*M, H)
	if err != nil {
		return nil, err
	}
	dh := H / cfg.Heads
	scale := float32(1 / math.Sqrt(float64(dh*3)))
	for i := 0; i < cfg.Layers; i++ {
		p := "deberta.encoder.layer." + strconv.Itoa(i) + "."
		var y layer
		inW, err := l.get(p+"attention.self.in_proj.weight", 3*H, H)
		if err != nil {
			return nil, err
		}
		qb, err := l.get(p+"attention.self.q_bias", H)
		if err != nil {
			return nil, err
		}
		vb, err := l.get(p+"attention.self.v_bias", H)
		if err != nil {
			return nil, err
		}
		// in_proj keeps each head's q, k and v rows together; regroup
		// them as all queries, all keys, all values, the queries (and
		// their bias) times the attention scale.
		y.qkv = linear{in: H, out: 3 * H, w: make([]float32, 3*H*H), b: make([]float32, 3*H)}
		for h := 0; h < cfg.Heads; h++ {
			for part := 0; part < 3; part++ {
				for d := 0; d < dh; d++ {
					src := inW[((3*h+part)*dh+d)*H:][:H]
					r := part*H + h*dh + d
					dst := y.qkv.w[r*H:][:H]
					f := float32(1)
					if part == 0 {
						f = scale
					}
					for j, v := range src {
						dst[j] = v * f
					}
					switch part {
					case 0:
						y.qkv.b[r] = qb[h*dh+d] * scale
					case 2:
						y.qkv.b[r] = vb[h*dh+d]
					}
				}
			}
		}
		pk, err := l.lin(p+"attention.self.pos_proj", H, H, false)
		if err != nil {
			return nil, err
		}
		pq, err := l.lin(p+"attention.self.pos_q_proj", H, H, true)
		if err != nil {
			return nil, err
		}
		// The position projections depend on the weights alone: H × 2M
		// each, computed once here.
		relT := transpose(rel, 2*M, H)
		y.pk = make([]float32, H*2*M)
		pk.apply(relT, 2*M, y.pk, false)
		y.pq = make([]float32, H*2*M)
		pq.apply(relT, 2*M, y.pq, false)
		for i := range y.pq {
			y.pq[i] *= scale
		}
		if y.out, err = l.lin(p+"attention.output.dense", H, H, true); err != nil {
			return nil, err
		}
		if y.ln1, err = l.norm(p+"attention.output.LayerNorm", H); err != nil {
			return nil, err
		}
		if y.fc1, err = l.lin(p+"intermediate.dense", cfg.Intermediate, H, true); err != nil {
			return nil, err
		}
		if y.fc2, err = l.lin(p+"output.dense", H, cfg.Intermediate, true); err != nil {
			return nil, err
		}
		if y.ln2, err = l.norm(p+"output.LayerNorm", H); err != nil {
			return nil, err
		}
		y.qkv.pack()
		y.out.pack()
		y.fc1.pack()
		y.fc2.pack()
		m.layers = append(m.layers, y)
	}
	if m.pooler, err = l.lin("pooler.dense", H, H, true); err != nil {
		return nil, err
	}
	if m.classifer, err = l.lin("classifier", 3, H, true); err != nil {
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
// the classifier's three logits per sequence, in the config's order.
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
	eps := float64(c.Eps)
	simdblas.LayerNormCols(x, H, n, m.lnEmb.g, m.lnEmb.b, float32(eps), x)
	qkv := make([]float32, 3*H*n)
	att := make([]float32, H*n)
	u := make([]float32, c.Intermediate*n)
	for li := range m.layers {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		y := &m.layers[li]
		y.qkv.apply(x, n, qkv, false)
		off := 0
		for _, s := range seqs {
			m.attention(y, qkv, n, off, len(s), att)
			off += len(s)
		}
		y.out.apply(att, n, x, true)
		simdblas.LayerNormCols(x, H, n, y.ln1.g, y.ln1.b, float32(eps), x)
		y.fc1.apply(x, n, u, false)
		simdblas.GELU(u)
		y.fc2.apply(u, n, x, true)
		simdblas.LayerNormCols(x, H, n, y.ln2.g, y.ln2.b, float32(eps), x)
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
	m.pooler.apply(first, B, pooled, false)
	simdblas.GELU(pooled)
	lg := make([]float32, 3*B)
	m.classifer.apply(pooled, B, lg, false)
	out := make([][3]float32, B)
	for b := range out {
		for r := 0; r < 3; r++ {
			out[b][r] = lg[r*B+b]
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
