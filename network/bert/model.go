package bert

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/format/weights"
	"github.com/genlens/genlens/internal/text/wordpiece"
	"github.com/genlens/genlens/network/internal/transformer"
)

type layer struct {
	qkv      transformer.Linear // query (scaled by 1/√head width), key and value stacked
	proj     transformer.Linear
	ln1      transformer.Norm
	fc1, fc2 transformer.Linear
	ln2      transformer.Norm
}

// Model is a loaded BERT: its tokenizer, encoder and, for a sequence
// classifier, pooler and classifier.
type Model struct {
	cfg    Config
	file   string // the weights, named in errors
	tok    *wordpiece.Tokenizer
	word   []float32 // vocab × hidden
	pos    []float32 // positions × hidden
	typ    []float32 // types × hidden
	embLN  transformer.Norm
	layers []layer
	// pooler and classifier are set for a sequence classifier.
	pooler, classifier *transformer.Linear
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

// New builds a model from a state dict with Hugging Face's BertModel key
// names, with or without the "bert." prefix of the task heads; file
// names the weights in errors. A missing tensor, a wrong shape, a NaN or
// ±Inf value or LayerNorm weights with which the norm could overflow
// float32 is a one-line *fault.InputError naming the file and the tensor
// (transformer.Loader).
func New(file string, cfg Config, tok *wordpiece.Tokenizer, sd map[string]*weights.Tensor, classifier bool) (*Model, error) {
	l := &transformer.Loader{File: file, Tensors: sd, Hint: "not the weights of this config.json?"}
	if _, ok := sd["bert.embeddings.word_embeddings.weight"]; ok {
		l.Prefix = "bert."
	}
	// A config of ReadConfig has passed this; one built otherwise must
	// too, or the head width below divides by zero.
	if err := transformer.CheckHeads(file, "num_attention_heads", cfg.Hidden, cfg.Heads); err != nil {
		return nil, err
	}
	W, I, eps := cfg.Hidden, cfg.Intermediate, float32(cfg.Eps)
	m := &Model{cfg: cfg, file: file, tok: tok}
	var err error
	if m.word, err = l.Tensor("embeddings.word_embeddings.weight", cfg.VocabSize, W); err != nil {
		return nil, err
	}
	if m.pos, err = l.Tensor("embeddings.position_embeddings.weight", cfg.MaxPositions, W); err != nil {
		return nil, err
	}
	if m.typ, err = l.Tensor("embeddings.token_type_embeddings.weight", cfg.TypeVocab, W); err != nil {
		return nil, err
	}
	if m.embLN, err = l.Norm("embeddings.LayerNorm", W, eps); err != nil {
		return nil, err
	}
	scale := float32(1 / sqrt(float64(W/cfg.Heads)))
	for i := range cfg.Layers {
		p := "encoder.layer." + strconv.Itoa(i) + "."
		var ly layer
		var q, k, v transformer.Linear
		if q, err = l.Linear(p+"attention.self.query", W, W); err != nil {
			return nil, err
		}
		if k, err = l.Linear(p+"attention.self.key", W, W); err != nil {
			return nil, err
		}
		if v, err = l.Linear(p+"attention.self.value", W, W); err != nil {
			return nil, err
		}
		ly.qkv = transformer.Linear{In: W, Out: 3 * W, W: make([]float32, 0, 3*W*W), B: make([]float32, 0, 3*W)}
		for _, x := range q.W {
			ly.qkv.W = append(ly.qkv.W, x*scale)
		}
		ly.qkv.W = append(append(ly.qkv.W, k.W...), v.W...)
		for _, x := range q.B {
			ly.qkv.B = append(ly.qkv.B, x*scale)
		}
		ly.qkv.B = append(append(ly.qkv.B, k.B...), v.B...)
		if ly.proj, err = l.Linear(p+"attention.output.dense", W, W); err != nil {
			return nil, err
		}
		if ly.ln1, err = l.Norm(p+"attention.output.LayerNorm", W, eps); err != nil {
			return nil, err
		}
		if ly.fc1, err = l.Linear(p+"intermediate.dense", I, W); err != nil {
			return nil, err
		}
		if ly.fc2, err = l.Linear(p+"output.dense", W, I); err != nil {
			return nil, err
		}
		if ly.ln2, err = l.Norm(p+"output.LayerNorm", W, eps); err != nil {
			return nil, err
		}
		for _, x := range []*transformer.Linear{&ly.qkv, &ly.proj, &ly.fc1, &ly.fc2} {
			x.Pack()
		}
		m.layers = append(m.layers, ly)
	}
	if classifier {
		pool, err := l.Linear("pooler.dense", W, W)
		if err != nil {
			return nil, err
		}
		// The classifier sits beside "bert.", not under it.
		cl := &transformer.Loader{File: file, Tensors: sd, Hint: l.Hint}
		shape, err := cl.Shape("classifier.weight")
		if err != nil {
			return nil, err
		}
		if len(shape) != 2 {
			return nil, &fault.InputError{File: file, Key: "classifier.weight", Msg: fmt.Sprintf("has shape %v, want a matrix", shape)}
		}
		head, err := cl.Linear("classifier", shape[0], W)
		if err != nil {
			return nil, err
		}
		m.pooler, m.classifier = &pool, &head
	}
	return m, nil
}
