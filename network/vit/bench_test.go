package vit

import (
	"context"

	"math/rand/v2"
	"strconv"
	"syscall"
	"testing"

	"github.com/genlens/genlens/internal/format/weights"
	"github.com/genlens/genlens/internal/tensor/simdblas"
	"github.com/genlens/genlens/network/internal/transformer"
)

// cpuSeconds is the user and system CPU time of the process so far: on
// a shared machine the wall clock measures the neighbours as well.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// randomWeights builds a state dict of cfg's shapes with the reference
// key names: random weights cost the network exactly what real ones do.
func randomWeights(cfg Config) map[string]*weights.Tensor {
	r := rand.New(rand.NewPCG(1, 2))
	sd := map[string]*weights.Tensor{}
	add := func(k string, shape ...int) {
		n := 1
		for _, d := range shape {
			n *= d
		}
		t := &weights.Tensor{Shape: shape, Data: make([]float32, n)}
		for i := range t.Data {
			t.Data[i] = float32(r.NormFloat64() * 0.02)
		}
		sd[k] = t
	}
	w, p, h := cfg.Width, cfg.Patch, cfg.Hidden
	if cfg.Family == DINOv2 {
		add("cls_token", 1, 1, w)
		add("pos_embed", 1, 1+37*37, w)
		add("patch_embed.proj.weight", w, 3, p, p)
		add("patch_embed.proj.bias", w)
		for i := 0; i < cfg.Depth; i++ {
			b := "blocks." + strconv.Itoa(i) + "."
			for _, n := range []string{"norm1", "norm2"} {
				add(b+n+".weight", w)
				add(b+n+".bias", w)
			}
			add(b+"attn.qkv.weight", 3*w, w)
			add(b+"attn.qkv.bias", 3*w)
			add(b+"attn.proj.weight", w, w)
			add(b+"attn.proj.bias", w)
			add(b+"ls1.gamma", w)
			add(b+"ls2.gamma", w)
			if cfg.SwiGLU {
				add(b+"mlp.w12.weight", 2*h, w)
				add(b+"mlp.w12.bias", 2*h)
				add(b+"mlp.w3.weight", w, h)
				add(b+"mlp.w3.bias", w)
			} else {
				add(b+"mlp.fc1.weight", h, w)
				add(b+"mlp.fc1.bias", h)
				add(b+"mlp.fc2.weight", w, h)
				add(b+"mlp.fc2.bias", w)
			}
		}
		add("norm.weight", w)
		add("norm.bias", w)
		return sd
	}
	add("conv1.weight", w, 3, p, p)
	add("class_embedding", w)
	add("positional_embedding", cfg.Tokens(), w)
	for _, n := range []string{"ln_pre", "ln_post"} {
		add(n+".weight", w)
		add(n+".bias", w)
	}
	for i := 0; i < cfg.Depth; i++ {
		b := "transformer.resblocks." + strconv.Itoa(i) + "."
		for _, n := range []string{"ln_1", "ln_2"} {
			add(b+n+".weight", w)
			add(b+n+".bias", w)
		}
		add(b+"attn.in_proj_weight", 3*w, w)
		add(b+"attn.in_proj_bias", 3*w)
		add(b+"attn.out_proj.weight", w, w)
		add(b+"attn.out_proj.bias", w)
		add(b+"mlp.c_fc.weight", h, w)
		add(b+"mlp.c_fc.bias", h)
		add(b+"mlp.c_proj.weight", w, h)
		add(b+"mlp.c_proj.bias", w)
	}
	add("proj", w, cfg.OutDim)
	return sd
}

// BenchmarkForward runs a batch of 4 images through each network with
// random weights and reports images/s, GMAC/s and CPU seconds an image:
//
//	go test ./vit -run '^$' -bench Forward -benchtime 1x
//
// ViT-L/14 (80 GMAC an image at 224) and the CLIP ViT-L/14 at 336 take
// tens of seconds a batch on two cores; select them by name.
func BenchmarkForward(b *testing.B) {
	for _, name := range []string{"dinov2-vits14", "dinov2-vitb14", "clip-vitb32", "dinov2-vitl14", "clip-vitl14-336", "dinov2-vitg14"} {
		b.Run(name, func(b *testing.B) {
			cfg := Configs[name]
			m, err := NewModel(name, cfg, randomWeights(cfg))
			if err != nil {
				b.Fatal(err)
			}
			const n = 4
			batch := make([][]float32, n)
			r := rand.New(rand.NewPCG(3, 4))
			for i := range batch {
				batch[i] = make([]float32, 3*cfg.Input*cfg.Input)
				for j := range batch[i] {
					batch[i][j] = float32(r.NormFloat64())
				}
			}
			b.ResetTimer()
			cpu0 := cpuSeconds()
			for i := 0; i < b.N; i++ {
				if _, err := m.Forward(context.Background(), batch, 0); err != nil {
					b.Fatal(err)
				}
			}
			sec := b.Elapsed().Seconds() / float64(b.N)
			b.ReportMetric(n/sec, "images/s")
			b.ReportMetric(n*cfg.MACs()/sec/1e9, "GMAC/s")
			// CPU seconds per image: images/s on an idle machine is about
			// the core count divided by this.
			b.ReportMetric((cpuSeconds()-cpu0)/float64(b.N)/n, "cpu-s/image")
		})
	}
}

// The layer benchmarks time the pieces of a block on one group of 4
// images at 224 px (1028 token columns, what Forward gives a goroutine
// for ViT-S/B), one goroutine, so that a regression shows where:
//
//	go test ./vit -run '^$' -bench 'Linear|Attention|LayerNorm|Activation' -count 5

const benchCols = 4 * 257

func randomSlice(r *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(r.NormFloat64())
	}
	return s
}

// BenchmarkLinear is each linear layer of ViT-S/14 and ViT-B/14 as
// Forward runs it: the packed weight times the group's columns, plus
// the bias.
func BenchmarkLinear(b *testing.B) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, tc := range []struct {
		name    string
		out, in int
	}{
		{"vits/qkv", 3 * 384, 384}, {"vits/proj", 384, 384}, {"vits/fc1", 1536, 384}, {"vits/fc2", 384, 1536},
		{"vitb/qkv", 3 * 768, 768}, {"vitb/proj", 768, 768}, {"vitb/fc1", 3072, 768}, {"vitb/fc2", 768, 3072},
	} {
		b.Run(tc.name, func(b *testing.B) {
			l := transformer.Linear{In: tc.in, Out: tc.out, W: randomSlice(r, tc.out*tc.in), B: randomSlice(r, tc.out)}
			l.Pack()
			x := randomSlice(r, tc.in*benchCols)
			c := make([]float32, tc.out*benchCols)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				l.Mul(x, benchCols, benchCols, c, benchCols, false, 1)
			}
			b.ReportMetric(float64(tc.out*tc.in*benchCols)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GMAC/s")
		})
	}
}

// BenchmarkAttention is the attention of one block for the group: per
// image and head, scores, softmax and the product with the values.
func BenchmarkAttention(b *testing.B) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, name := range []string{"dinov2-vits14", "dinov2-vitb14"} {
		b.Run(name, func(b *testing.B) {
			cfg := Configs[name]
			m := &Model{cfg: cfg}
			W, T := cfg.Width, cfg.Tokens()
			qkv := randomSlice(r, 3*W*benchCols)
			att := make([]float32, W*benchCols)
			var sc simdblas.AttnScratch
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := m.attention(context.Background(), qkv, benchCols/T, benchCols, att, 1, &sc); err != nil {
					b.Fatal(err)
				}
			}
			macs := 2 * float64(T*T*W) * float64(benchCols/T)
			b.ReportMetric(macs*float64(b.N)/b.Elapsed().Seconds()/1e9, "GMAC/s")
		})
	}
}

// BenchmarkLayerNorm normalises the group's columns at the widths of
// ViT-S and ViT-B.
func BenchmarkLayerNorm(b *testing.B) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, w := range []int{384, 768} {
		b.Run(strconv.Itoa(w), func(b *testing.B) {
			x := randomSlice(r, w*benchCols)
			nm := transformer.Norm{G: randomSlice(r, w), B: randomSlice(r, w), Eps: 1e-6}
			dst := make([]float32, len(x))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				nm.Cols(x, benchCols, dst)
			}
			b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(b.N)/float64(len(x)), "ns/value")
		})
	}
}

// BenchmarkActivation is the FFN activations over ViT-S's hidden layer
// for the group.
func BenchmarkActivation(b *testing.B) {
	r := rand.New(rand.NewPCG(13, 14))
	x := randomSlice(r, 1536*benchCols)
	y := make([]float32, len(x))
	for _, tc := range []struct {
		name string
		f    func([]float32)
	}{{"gelu", gelu}, {"quickGELU", quickGELU}, {"swiglu", func(a []float32) { swiglu(a[:len(a)/2], a[len(a)/2:]) }}} {
		b.Run(tc.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				copy(y, x)
				b.StartTimer()
				tc.f(y)
			}
			b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(b.N)/float64(len(x)), "ns/value")
		})
	}
}
