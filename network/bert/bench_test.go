package bert

import (
	"context"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/genlens/genlens/internal/format/weights"
	"github.com/genlens/genlens/internal/text/wordpiece"
)

// randomModel builds a BERT of cfg with random weights in memory.
func randomModel(tb testing.TB, cfg Config) *Model {
	tb.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	W, I := cfg.Hidden, cfg.Intermediate
	sd := map[string]*weights.Tensor{}
	put := func(key string, shape ...int) {
		n := 1
		for _, d := range shape {
			n *= d
		}
		t := &weights.Tensor{Shape: shape, Data: make([]float32, n)}
		for i := range t.Data {
			t.Data[i] = float32(rng.NormFloat64() * 0.05)
		}
		sd[key] = t
	}
	lin := func(key string, out, in int) { put(key+".weight", out, in); put(key+".bias", out) }
	put("embeddings.word_embeddings.weight", cfg.VocabSize, W)
	put("embeddings.position_embeddings.weight", cfg.MaxPositions, W)
	put("embeddings.token_type_embeddings.weight", cfg.TypeVocab, W)
	put("embeddings.LayerNorm.weight", W)
	put("embeddings.LayerNorm.bias", W)
	for i := range cfg.Layers {
		p := "encoder.layer." + strconv.Itoa(i) + "."
		for _, k := range []string{"query", "key", "value"} {
			lin(p+"attention.self."+k, W, W)
		}
		lin(p+"attention.output.dense", W, W)
		put(p+"attention.output.LayerNorm.weight", W)
		put(p+"attention.output.LayerNorm.bias", W)
		lin(p+"intermediate.dense", I, W)
		lin(p+"output.dense", W, I)
		put(p+"output.LayerNorm.weight", W)
		put(p+"output.LayerNorm.bias", W)
	}
	vocab := map[string]int32{"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3}
	tok, err := wordpiece.New("vocab", vocab, wordpiece.Options{Lower: true, StripAccents: true})
	if err != nil {
		tb.Fatal(err)
	}
	m, err := New("random", cfg, tok, sd, false)
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

// e5Small is the shape of intfloat/e5-small-v2's config.json.
var e5Small = Config{VocabSize: 30522, Hidden: 384, Heads: 12, Intermediate: 1536, Layers: 12,
	MaxPositions: 512, TypeVocab: 2, Eps: 1e-12, Act: "gelu"}

// BenchmarkE5Small embeds 64 sentences of 32 tokens at the e5-small-v2
// shape (bench_torch.py runs the same in PyTorch).
func BenchmarkE5Small(b *testing.B) {
	m := randomModel(b, e5Small)
	rng := rand.New(rand.NewPCG(3, 4))
	const B, T = 64, 32
	encs := make([]wordpiece.Encoding, B)
	for i := range encs {
		encs[i] = wordpiece.Encoding{IDs: make([]int32, T), Types: make([]int32, T)}
		for t := range encs[i].IDs {
			encs[i].IDs[t] = int32(5 + rng.IntN(30000))
		}
	}
	b.ResetTimer()
	for range b.N {
		err := m.Run(context.Background(), encs, 0, func(int, *States) {})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(B*b.N)/b.Elapsed().Seconds(), "sentences/s")
}
