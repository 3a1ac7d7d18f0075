package transformer_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/format/weights"
	"github.com/genlens/genlens/network/bert"
	"github.com/genlens/genlens/network/deberta"
	"github.com/genlens/genlens/network/nli"
	"github.com/genlens/genlens/network/vit"
)

// writeSafetensors writes sd as a safetensors file of float32 tensors.
func writeSafetensors(t *testing.T, path string, sd map[string]*weights.Tensor) {
	t.Helper()
	type entry struct {
		DType   string   `json:"dtype"`
		Shape   []int    `json:"shape"`
		Offsets [2]int64 `json:"data_offsets"`
	}
	keys := make([]string, 0, len(sd))
	for k := range sd {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	hdr := map[string]entry{}
	var data []byte
	for _, k := range keys {
		tn := sd[k]
		start := int64(len(data))
		for _, v := range tn.Data {
			data = binary.LittleEndian.AppendUint32(data, math.Float32bits(v))
		}
		hdr[k] = entry{DType: "F32", Shape: tn.Shape, Offsets: [2]int64{start, int64(len(data))}}
	}
	h, err := json.Marshal(hdr)
	if err != nil {
		t.Fatal(err)
	}
	out := binary.LittleEndian.AppendUint64(nil, uint64(len(h)))
	out = append(append(out, h...), data...)
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// copyFiles copies the named files of dir into a temporary directory.
func copyFiles(t *testing.T, dir string, names ...string) string {
	t.Helper()
	tmp := t.TempDir()
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(tmp, n), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return tmp
}

// network is one of the transformer networks as a user loads it: the
// fixture its weights come from, and a model laid out for it in a
// temporary directory.
type network struct {
	name    string
	weights string // the fixture's weights (any format weights.Load reads)
	// setup lays out a model whose weights, written as safetensors by
	// the caller, go to the returned path; load loads it and returns a
	// function that runs it on a small batch.
	setup func(t *testing.T) (weightsPath string, load func() (run func() error, err error))
}

const (
	vitData     = "../../vit/testdata"
	bertData    = "../../bert/testdata"
	debertaData = "../../deberta/testdata"
)

func vitNetwork(name, weights string, cfg vit.Config) network {
	return network{name, weights, func(t *testing.T) (string, func() (func() error, error)) {
		p := filepath.Join(t.TempDir(), cfg.Name+".safetensors")
		return p, func() (func() error, error) {
			m, err := vit.Load(p, cfg)
			if err != nil {
				return nil, err
			}
			return func() error {
				img := make([]float32, 3*cfg.Input*cfg.Input)
				for i := range img {
					img[i] = float32(i%7-3) / 2
				}
				_, err := m.Forward(context.Background(), [][]float32{img, img}, 1)
				return err
			}, nil
		}
	}}
}

var pairs = []nli.Pair{{Premise: "A spider has eight legs.", Hypothesis: "Spiders have legs."}, {Premise: "a", Hypothesis: "b"}}

var networks = map[string]network{
	"vit dinov2": vitNetwork("vit dinov2", vitData+"/dinov2_small.pth",
		vit.Config{Name: "dinov2-small", Family: vit.DINOv2, Patch: 14, Width: 32, Depth: 2, Heads: 2, Hidden: 128, Input: 56}),
	"vit clip": vitNetwork("vit clip", vitData+"/clip_small.safetensors",
		vit.Config{Name: "clip-small", Family: vit.CLIP, Patch: 14, Width: 32, Depth: 2, Heads: 2, Hidden: 128, Input: 56, OutDim: 24}),
	"bert embedder": {"bert embedder", bertData + "/e5/model.safetensors", func(t *testing.T) (string, func() (func() error, error)) {
		dir := copyFiles(t, bertData+"/e5", "config.json", "vocab.txt")
		return filepath.Join(dir, "model.safetensors"), func() (func() error, error) {
			e, err := bert.OpenEmbedder("e5-small-v2", dir, "query: ")
			if err != nil {
				return nil, err
			}
			return func() error {
				_, err := e.Forward(context.Background(), []string{"hello world", "how many legs does a spider have?"})
				return err
			}, nil
		}
	}},
	"bert classifier": {"bert classifier", bertData + "/nli/pytorch_model.bin", func(t *testing.T) (string, func() (func() error, error)) {
		dir := copyFiles(t, bertData+"/nli", "config.json", "vocab.txt")
		return filepath.Join(dir, "model.safetensors"), func() (func() error, error) {
			c, err := bert.LoadClassifier(dir, "bert-nli-fixture", 1)
			if err != nil {
				return nil, err
			}
			return func() error { _, err := c.Classify(context.Background(), pairs); return err }, nil
		}
	}},
	"deberta": {"deberta", debertaData + "/tiny.safetensors", func(t *testing.T) (string, func() (func() error, error)) {
		dir := copyFiles(t, debertaData, "config.json", "vocab.json", "merges.txt")
		return filepath.Join(dir, "model.safetensors"), func() (func() error, error) {
			m, err := deberta.Open(dir, "deberta-tiny")
			if err != nil {
				return nil, err
			}
			return func() error { _, err := m.Classify(context.Background(), pairs); return err }, nil
		}
	}},
}

// poisoned writes the fixture of nw with edit applied to its state dict
// where nw reads it, and returns the path and the loader.
func poisoned(t *testing.T, nw network, edit func(sd map[string]*weights.Tensor)) (string, func() (func() error, error)) {
	t.Helper()
	sd, err := weights.Load(nw.weights)
	if err != nil {
		t.Fatal(err)
	}
	edit(sd)
	path, load := nw.setup(t)
	writeSafetensors(t, path, sd)
	return path, load
}

// wantInputError fails t unless err is a one-line *fault.InputError
// naming path, key (if not empty) and want.
func wantInputError(t *testing.T, err error, path, key, want string) {
	t.Helper()
	var ie *fault.InputError
	if !errors.As(err, &ie) {
		t.Fatalf("no error, or another (%v): want a *fault.InputError", err)
	}
	msg := err.Error()
	if ie.File != path || ie.Key != key || !strings.Contains(msg, want) || strings.Contains(msg, "\n") || !strings.Contains(msg, path) {
		t.Fatalf("error %q (file %q, key %q), want one line naming %s, %q and %q", msg, ie.File, ie.Key, path, key, want)
	}
}

// TestNetworksRefuseBadWeights loads every network from a copy of its
// fixture with one element of one tensor made NaN, ±Inf or, in a
// LayerNorm, finite but so large that the norm's output would overflow:
// each must refuse it with one line naming the file, the tensor (by the
// name the network reads it under) and the element, and the unchanged
// copy must load.
func TestNetworksRefuseBadWeights(t *testing.T) {
	const elem = 17
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	for _, c := range []struct {
		net    string
		tensor string // as stored in the fixture
		key    string // as the error names it, if not tensor
		norm   bool   // a LayerNorm's weight or bias
	}{
		{net: "vit dinov2", tensor: "blocks.1.norm1.weight", norm: true},
		{net: "vit dinov2", tensor: "blocks.0.attn.qkv.weight"},
		{net: "vit dinov2", tensor: "pos_embed"},
		// Hugging Face's CLIP names are mapped to OpenAI's before loading.
		{net: "vit clip", tensor: "vision_model.encoder.layers.1.layer_norm2.weight", key: "visual.transformer.resblocks.1.ln_2.weight", norm: true},
		{net: "vit clip", tensor: "vision_model.encoder.layers.1.mlp.fc1.weight", key: "visual.transformer.resblocks.1.mlp.c_fc.weight"},
		{net: "bert embedder", tensor: "encoder.layer.1.output.LayerNorm.weight", norm: true},
		{net: "bert embedder", tensor: "embeddings.LayerNorm.bias", norm: true},
		{net: "bert embedder", tensor: "embeddings.word_embeddings.weight"},
		{net: "bert embedder", tensor: "encoder.layer.0.intermediate.dense.bias"},
		{net: "bert classifier", tensor: "bert.encoder.layer.0.attention.output.LayerNorm.weight", norm: true},
		{net: "bert classifier", tensor: "bert.pooler.dense.weight"},
		{net: "bert classifier", tensor: "classifier.weight"},
		{net: "deberta", tensor: "deberta.encoder.layer.1.output.LayerNorm.weight", norm: true},
		{net: "deberta", tensor: "deberta.encoder.layer.1.output.LayerNorm.bias", norm: true},
		{net: "deberta", tensor: "deberta.encoder.rel_embeddings.weight"},
		{net: "deberta", tensor: "classifier.weight"},
	} {
		nw := networks[c.net]
		if nw.name == "" {
			t.Fatalf("no network %q", c.net)
		}
		values := []float32{nan, inf, -inf}
		if c.norm {
			values = append(values, 3e38, -3e38)
		}
		for _, v := range values {
			t.Run(fmt.Sprintf("%s/%s=%v", c.net, c.tensor, v), func(t *testing.T) {
				path, load := poisoned(t, nw, func(sd map[string]*weights.Tensor) {
					tn := sd[c.tensor]
					if tn == nil || len(tn.Data) <= elem {
						t.Fatalf("the fixture has no tensor %s of more than %d values", c.tensor, elem)
					}
					tn.Data[elem] = v
				})
				_, err := load()
				key := c.key
				if key == "" {
					key = c.tensor
				}
				want := fmt.Sprintf("element %d is %v", elem, v)
				if !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0) {
					want = fmt.Sprintf("element %d is %g: this LayerNorm of", elem, v)
				}
				wantInputError(t, err, path, key, want)
			})
		}
	}
	// The copies as written, unchanged, load and run: the refusals above
	// are the values', not the rewriting's.
	for name, nw := range networks {
		t.Run(name+"/unchanged", func(t *testing.T) {
			_, load := poisoned(t, nw, func(map[string]*weights.Tensor) {})
			run, err := load()
			if err != nil {
				t.Fatal(err)
			}
			if err := run(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestNetworksRefuseOverflow loads every network with a finite but
// absurd weight outside a LayerNorm, which loads (it is finite) but
// makes a product overflow float32: running it must fail with one line
// naming the weights file, not return NaN or ±Inf as a result.
func TestNetworksRefuseOverflow(t *testing.T) {
	for _, c := range []struct{ net, tensor string }{
		{"vit dinov2", "blocks.1.mlp.fc2.weight"},
		{"vit clip", "visual_projection.weight"},
		{"bert embedder", "encoder.layer.0.output.dense.weight"},
		{"bert classifier", "classifier.weight"},
		{"deberta", "classifier.weight"},
	} {
		t.Run(c.net+"/"+c.tensor, func(t *testing.T) {
			path, load := poisoned(t, networks[c.net], func(sd map[string]*weights.Tensor) {
				tn := sd[c.tensor]
				if tn == nil {
					t.Fatalf("the fixture has no tensor %s", c.tensor)
				}
				for i := range tn.Data {
					tn.Data[i] = 3e38
				}
			})
			run, err := load()
			if err != nil {
				t.Fatalf("refused at load (%v): the test wants a weight that loads", err)
			}
			wantInputError(t, run(), path, "", "too large for float32")
		})
	}
}

// TestNetworksRefuseBadHeads gives every network a head count that does
// not split its width into equal heads, from its config.json or from a
// Config built in code: each must refuse it with one line naming the
// file and the key, before it runs. A count that divides the width but
// disagrees with the checkpoint cannot be told from any tensor's shape
// (see CheckHeads), so it is not among the cases.
func TestNetworksRefuseBadHeads(t *testing.T) {
	// withHeads copies the fixture's files of dir with config.json's
	// head count (4 in every fixture, of a width of 32) set to heads.
	withHeads := func(t *testing.T, dir string, heads int, names ...string) string {
		t.Helper()
		tmp := copyFiles(t, dir, names...)
		p := filepath.Join(tmp, "config.json")
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		s := strings.Replace(string(b), `"num_attention_heads": 4`, fmt.Sprintf(`"num_attention_heads": %d`, heads), 1)
		if s == string(b) {
			t.Fatal("the fixture's config.json has no 4 heads; update this test")
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return tmp
	}
	fixture := func(t *testing.T, path string) map[string]*weights.Tensor {
		t.Helper()
		sd, err := weights.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		return sd
	}
	for _, c := range []struct {
		name string
		load func(t *testing.T) (path string, err error) // the file the error must name, and the error
		key  string
	}{
		{"bert config.json 5 heads", func(t *testing.T) (string, error) {
			dir := withHeads(t, bertData+"/e5", 5, "config.json", "vocab.txt", "model.safetensors")
			_, err := bert.Load(dir, false)
			return filepath.Join(dir, "config.json"), err
		}, "num_attention_heads"},
		{"bert classifier config.json 3 heads", func(t *testing.T) (string, error) {
			dir := withHeads(t, bertData+"/nli", 3, "config.json", "vocab.txt", "pytorch_model.bin")
			_, err := bert.LoadClassifier(dir, "bert-nli-fixture", 1)
			return filepath.Join(dir, "config.json"), err
		}, "num_attention_heads"},
		{"bert Config 0 heads", func(t *testing.T) (string, error) {
			cfg, err := bert.ReadConfig(bertData + "/e5/config.json")
			if err != nil {
				t.Fatal(err)
			}
			cfg.Heads = 0
			p := bertData + "/e5/model.safetensors"
			_, err = bert.New(p, cfg, nil, fixture(t, p), false)
			return p, err
		}, "num_attention_heads"},
		{"deberta config.json 5 heads", func(t *testing.T) (string, error) {
			dir := withHeads(t, debertaData, 5, "config.json", "vocab.json", "merges.txt")
			_, err := deberta.Open(dir, "deberta-tiny")
			return filepath.Join(dir, "config.json"), err
		}, "num_attention_heads"},
		{"deberta Config 3 heads", func(t *testing.T) (string, error) {
			cfg, err := deberta.LoadConfig(debertaData + "/config.json")
			if err != nil {
				t.Fatal(err)
			}
			cfg.Heads = 3
			p := debertaData + "/tiny.safetensors"
			_, err = deberta.New(p, "deberta-tiny", cfg, nil, fixture(t, p))
			return p, err
		}, "num_attention_heads"},
		{"vit dinov2 3 heads", func(t *testing.T) (string, error) {
			p := vitData + "/dinov2_small.pth"
			_, err := vit.Load(p, vit.Config{Name: "dinov2-small", Family: vit.DINOv2, Patch: 14, Width: 32, Depth: 2, Heads: 3, Hidden: 128, Input: 56})
			return p, err
		}, "heads"},
		{"vit clip 0 heads", func(t *testing.T) (string, error) {
			p := vitData + "/clip_small.safetensors"
			_, err := vit.Load(p, vit.Config{Name: "clip-small", Family: vit.CLIP, Patch: 14, Width: 32, Depth: 2, Heads: 0, Hidden: 128, Input: 56, OutDim: 24})
			return p, err
		}, "heads"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path, err := c.load(t)
			wantInputError(t, err, path, c.key, "")
			if !strings.Contains(err.Error(), "32") {
				t.Errorf("%q does not name the width 32 the heads must split", err)
			}
		})
	}
}
