package deberta

import (
	"context"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/genlens/genlens/internal/format/weights"
	"github.com/genlens/genlens/internal/text/bpe"
)

// randomModel builds a model of cfg with random weights (the shape of a
// released model without its 1.6 GB of weights in the repository).
func randomModel(b *testing.B, cfg Config) *Model {
	b.Helper()
	r := rand.New(rand.NewPCG(1, 2))
	sd := map[string]*weights.Tensor{}
	put := func(k string, shape ...int) {
		n := 1
		for _, s := range shape {
			n *= s
		}
		d := make([]float32, n)
		for i := range d {
			d[i] = float32(r.NormFloat64() * 0.02)
		}
		sd[k] = &weights.Tensor{Shape: shape, Data: d}
	}
	H, I, M := cfg.Hidden, cfg.Intermediate, cfg.MaxRelative
	put("deberta.embeddings.word_embeddings.weight", cfg.Vocab, H)
	put("deberta.embeddings.LayerNorm.weight", H)
	put("deberta.embeddings.LayerNorm.bias", H)
	put("deberta.encoder.rel_embeddings.weight", 2*M, H)
	for i := 0; i < cfg.Layers; i++ {
		p := "deberta.encoder.layer." + strconv.Itoa(i) + "."
		put(p+"attention.self.in_proj.weight", 3*H, H)
		put(p+"attention.self.q_bias", H)
		put(p+"attention.self.v_bias", H)
		put(p+"attention.self.pos_proj.weight", H, H)
		put(p+"attention.self.pos_q_proj.weight", H, H)
		put(p+"attention.self.pos_q_proj.bias", H)
		for _, k := range []string{"attention.output.dense", "output.dense"} {
			put(p+k+".bias", H)
		}
		put(p+"attention.output.dense.weight", H, H)
		put(p+"intermediate.dense.weight", I, H)
		put(p+"intermediate.dense.bias", I)
		put(p+"output.dense.weight", H, I)
		for _, k := range []string{"attention.output.LayerNorm", "output.LayerNorm"} {
			put(p+k+".weight", H)
			put(p+k+".bias", H)
		}
	}
	put("pooler.dense.weight", H, H)
	put("pooler.dense.bias", H)
	put("classifier.weight", 3, H)
	put("classifier.bias", 3)
	tok := bpe.New(map[string]int{"[PAD]": 0, "[CLS]": 1, "[SEP]": 2, "[UNK]": 3}, nil, "[UNK]")
	m, err := New("random", "random", cfg, tok, sd)
	if err != nil {
		b.Fatal(err)
	}
	return m
}

// BenchmarkLargePairs runs the deberta-large-mnli shape (24 layers,
// hidden 1024, 16 heads, intermediate 4096, 512 relative positions) on
// batches of 8 pairs of 32 tokens, a typical pair of short answers with
// their question, and reports pairs/s. The vocabulary is cut to 1000
// rows: the embedding is a lookup, its size costs no time.
func BenchmarkLargePairs(b *testing.B) {
	cfg := Config{Hidden: 1024, Layers: 24, Heads: 16, Intermediate: 4096, MaxPositions: 512, MaxRelative: 512, Vocab: 1000, Eps: 1e-7}
	m := randomModel(b, cfg)
	const batch, length = 8, 32
	r := rand.New(rand.NewPCG(3, 4))
	seqs := make([][]int, batch)
	for i := range seqs {
		seqs[i] = make([]int, length)
		for j := range seqs[i] {
			seqs[i][j] = 4 + r.IntN(cfg.Vocab-4)
		}
		seqs[i][0], seqs[i][length/2], seqs[i][length-1] = 1, 2, 2
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := m.Logits(context.Background(), seqs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(batch*b.N)/b.Elapsed().Seconds(), "pairs/s")
}
