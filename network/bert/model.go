package bert

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/format/weights"
	"github.com/genlens/genlens/internal/tensor/linalg"
	"github.com/genlens/genlens/internal/tensor/simdblas"
	"github.com/genlens/genlens/internal/text/wordpiece"
)

// linear is nn.Linear, y = Wx + b, its weight packed for the SGEMM
// kernel when that runs.
type linear struct {
	in, out int
	w, b    []float32
	pw      *simdblas.Packed
}

// norm is a LayerNorm's weight and bias.
type norm struct{ g, b []float32 }

type layer struct {
	qkv      linear // query (scaled by 1/√head width), key and value stacked
	proj     linear
	ln1      norm
	fc1, fc2 linear
	ln2      norm
}

// Model is a loaded BERT: its tokenizer, encoder and, for a sequence
// classifier, pooler and classifier.
type Model struct {
	cfg    Config
	tok    *wordpiece.Tokenizer
	word   []float32 // vocab × hidden
	pos    []float32 // positions × hidden
	typ    []float32 // types × hidden
	embLN  norm
	layers []layer
	// pooler and classifier are set for a sequence classifier.
	pooler, classifier *linear
}

// Config returns the model's configuration.
func (m *Model) Config() Config { return m.cfg }

// Tokenizer returns the model's tokenizer.
func (m *Model) Tokenizer() *wordpiece.Tokenizer { return m.tok }

// WeightsFile returns the weights file of a model directory:
// model.safetensors, else pytorch_model.bin.
func WeightsFile(dir string) (string, error) {
	for _, name := range []string{"model.safetensors", "pytorch_model.bin"} {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p, nil
		}
	}
	return "", &fault.InputError{File: dir, Msg: "has neither model.safetensors nor pytorch_model.bin"}
}

// Load reads a model directory: config.json, the tokenizer and the
// weights. With classifier set it reads a BertForSequenceClassification
// (pooler and classifier too).
func Load(dir string, classifier bool) (*Model, error) {
	cfg, err := ReadConfig(filepath.Join(dir, "config.json"))
	if err != nil {
		return nil, err
	}
	tok, err := wordpiece.Load(dir)
	if err != nil {
		return nil, err
	}
	if tok.VocabSize() > cfg.VocabSize {
		return nil, &fault.InputError{File: dir, Key: "vocab_size", Msg: fmt.Sprintf("the tokenizer has ids up to %d, config.json's vocab_size is %d", tok.VocabSize()-1, cfg.VocabSize)}
	}
	wf, err := WeightsFile(dir)
	if err != nil {
		return nil, err
	}
	// BertForPreTraining checkpoints carry the masked-LM head (cls.*, a
	// vocabulary-sized matrix) that no use here needs.
	sd, err := weights.LoadKeys(wf, func(k string) bool { return !strings.HasPrefix(k, "cls.") })
	if err != nil {
		return nil, err
	}
	return New(wf, cfg, tok, sd, classifier)
}

type loader struct {
	file   string
	prefix string
	sd     map[string]*weights.Tensor
}

func (l *loader) get(key string, shape ...int) ([]float32, error) {
	t, ok := l.sd[l.prefix+key]
	if !ok {
		return nil, &fault.InputError{File: l.file, Key: l.prefix + key, Msg: "missing"}
	}
	if len(t.Shape) != len(shape) {
		return nil, &fault.InputError{File: l.file, Key: l.prefix + key, Msg: fmt.Sprintf("has shape %v, want %v", t.Shape, shape)}
	}
	for i := range shape {
		if t.Shape[i] != shape[i] {
			return nil, &fault.InputError{File: l.file, Key: l.prefix + key, Msg: fmt.Sprintf("has shape %v, want %v", t.Shape, shape)}
		}
	}
	return t.Data, nil
}

func (l *loader) lin(key string, out, in int) (linear, error) {
	w, err := l.get(key+".weight", out, in)
	if err != nil {
		return linear{}, err
	}
	b, err := l.get(key+".bias", out)
	if err != nil {
		return linear{}, err
	}
	return linear{in: in, out: out, w: w, b: b}, nil
}

func (l *loader) norm(key string, w int) (norm, error) {
	g, err := l.get(key+".weight", w)
	if err != nil {
		return norm{}, err
	}
	b, err := l.get(key+".bias", w)
	if err != nil {
		return norm{}, err
	}
	return norm{g, b}, nil
}

// New builds a model from a state dict with Hugging Face's BertModel key
// names, with or without the "bert." prefix of the task heads; file
// names the weights in errors.
func New(file string, cfg Config, tok *wordpiece.Tokenizer, sd map[string]*weights.Tensor, classifier bool) (*Model, error) {
	l := &loader{file: file, sd: sd}
	if _, ok := sd["bert.embeddings.word_embeddings.weight"]; ok {
		l.prefix = "bert."
	}
	W, I := cfg.Hidden, cfg.Intermediate
	m := &Model{cfg: cfg, tok: tok}
	var err error
	if m.word, err = l.get("embeddings.word_embeddings.weight", cfg.VocabSize, W); err != nil {
		return nil, err
	}
	if m.pos, err = l.get("embeddings.position_embeddings.weight", cfg.MaxPositions, W); err != nil {
		return nil, err
	}
	if m.typ, err = l.get("embeddings.token_type_embeddings.weight", cfg.TypeVocab, W); err != nil {
		return nil, err
	}
	if m.embLN, err = l.norm("embeddings.LayerNorm", W); err != nil {
		return nil, err
	}
	scale := float32(1 / sqrt(float64(W/cfg.Heads)))
	for i := range cfg.Layers {
		p := "encoder.layer." + strconv.Itoa(i) + "."
		var ly layer
		var q, k, v linear
		if q, err = l.lin(p+"attention.self.query", W, W); err != nil {
			return nil, err
		}
		if k, err = l.lin(p+"attention.self.key", W, W); err != nil {
			return nil, err
		}
		if v, err = l.lin(p+"attention.self.value", W, W); err != nil {
			return nil, err
		}
		ly.qkv = linear{in: W, out: 3 * W, w: make([]float32, 0, 3*W*W), b: make([]float32, 0, 3*W)}
		for _, x := range q.w {
			ly.qkv.w = append(ly.qkv.w, x*scale)
		}
		ly.qkv.w = append(append(ly.qkv.w, k.w...), v.w...)
		for _, x := range q.b {
			ly.qkv.b = append(ly.qkv.b, x*scale)
		}
		ly.qkv.b = append(append(ly.qkv.b, k.b...), v.b...)
		if ly.proj, err = l.lin(p+"attention.output.dense", W, W); err != nil {
			return nil, err
		}
		if ly.ln1, err = l.norm(p+"attention.output.LayerNorm", W); err != nil {
			return nil, err
		}
		if ly.fc1, err = l.lin(p+"intermediate.dense", I, W); err != nil {
			return nil, err
		}
		if ly.fc2, err = l.lin(p+"output.dense", W, I); err != nil {
			return nil, err
		}
		if ly.ln2, err = l.norm(p+"output.LayerNorm", W); err != nil {
			return nil, err
		}
		for _, x := range []*linear{&ly.qkv, &ly.proj, &ly.fc1, &ly.fc2} {
			x.pack()
		}
		m.layers = append(m.layers, ly)
	}
	if classifier {
		pool, err := l.lin("pooler.dense", W, W)
		if err != nil {
			return nil, err
		}
		// The classifier sits beside "bert.", not under it.
		cl := &loader{file: file, sd: sd}
		t, ok := sd["classifier.weight"]
		if !ok || len(t.Shape) != 2 {
			return nil, &fault.InputError{File: file, Key: "classifier.weight", Msg: "missing or not a matrix"}
		}
		head, err := cl.lin("classifier", t.Shape[0], W)
		if err != nil {
			return nil, err
		}
		m.pooler, m.classifier = &pool, &head
	}
	return m, nil
}

// pack packs W for the SGEMM kernel when it runs.
func (l *linear) pack() {
	if linalg.SgemmKernel() {
		l.pw = simdblas.Pack(l.out, l.in, l.w, l.in)
		l.w = nil
	}
}

// mul computes C = W·X + b for the n columns of X (ldx) into C (ldc).
func (l *linear) mul(x []float32, ldx, n int, c []float32, ldc int) {
	if l.pw != nil {
		simdblas.MulPackedBias(l.pw, n, x, ldx, l.b, c, ldc, false)
		return
	}
	for r := 0; r < l.out; r++ {
		row := c[r*ldc:][:n]
		for j := range row {
			row[j] = l.b[r]
		}
	}
	linalg.Sgemm(false, false, l.out, n, l.in, 1, l.w, l.in, x, ldx, 1, c, ldc)
}
