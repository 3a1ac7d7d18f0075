package simdblas

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// netShapes are the products the networks run, as they run them: m
// output channels or features (the packed weights), k inputs, n pixels
// of one image or the padded tokens of a group of images.
var netShapes = []struct {
	name    string
	m, n, k int
}{
	// Inception-v3 at 299², one image: convolutions through im2col panels
	// or (1×1) the feature map itself.
	{"inc-1a-3x3", 32, 22201, 27},
	{"inc-3b-1x1", 80, 5329, 64},
	{"inc-5b-1x1", 176, 1225, 192},
	{"inc-5b-5x5", 64, 1225, 1200},
	{"inc-6a-3x3", 384, 289, 2592},
	{"inc-6b-1x1", 640, 289, 768},
	{"inc-6b-1x7", 128, 289, 896},
	{"inc-6e-7x1", 192, 289, 1344},
	{"inc-7a-3x3", 320, 64, 1728},
	{"inc-7b-1x1", 1344, 64, 1280},
	{"inc-7b-3x3", 384, 64, 4032},
	// The Winograd products (one of the 36 of a band of 4×4 blocks, as
	// inception's 1M-value bands size them): cout × cin times cin ×
	// blocks, for Conv2d_2a, 2b, 4a and the 3×3 pair of Mixed_5b.
	{"inc-wino-2a", 32, 407, 32},
	{"inc-wino-2b", 64, 222, 32},
	{"inc-wino-4a", 192, 72, 80},
	{"inc-wino-5b", 96, 81, 64},
	{"inc-wino-5b2", 96, 81, 96},
	// DINOv2 ViT-S/14 and ViT-B/14, four images of 257 tokens padded to
	// 1056 columns: qkv, projection, fc1, fc2.
	{"vitS-qkv", 1152, 1056, 384},
	{"vitS-proj", 384, 1056, 384},
	{"vitS-fc1", 1536, 1056, 384},
	{"vitS-fc2", 384, 1056, 1536},
	{"vitB-qkv", 2304, 1056, 768},
	{"vitB-fc2", 768, 1056, 3072},
}

// BenchmarkMulPackedBias runs the networks' products as they do: weights
// packed once, bias and ReLU in the kernel, on the calling goroutine. It
// reports GFLOP/s of wall time and of CPU time (the steadier on a shared
// machine) and allocations.
func BenchmarkMulPackedBias(b *testing.B) {
	defer func(k *kernel[float32]) { sgemmK = k }(sgemmK)
	for _, s := range netShapes {
		rng := rand.New(rand.NewPCG(1, 2))
		a, bb, c := randF32(rng, s.m*s.k), randF32(rng, s.k*s.n), make([]float32, s.m*s.n)
		bias := randF32(rng, s.m)
		for _, kn := range sgemmKernels() {
			if kn == sgemmGo {
				continue
			}
			sgemmK = kn
			p := Pack(s.m, s.k, a, s.k)
			b.Run(fmt.Sprintf("%s/%s", s.name, kn.name), func(b *testing.B) {
				b.ReportAllocs()
				MulPackedBias(p, s.n, bb, s.n, bias, c, s.n, true)
				cpu0 := cpuSeconds()
				for b.Loop() {
					MulPackedBias(p, s.n, bb, s.n, bias, c, s.n, true)
				}
				flop := 2 * float64(s.m*s.n*s.k) * float64(b.N)
				b.ReportMetric(flop/b.Elapsed().Seconds()/1e9, "GFLOP/s")
				if cpu := cpuSeconds() - cpu0; cpu > 0 {
					b.ReportMetric(flop/cpu/1e9, "cpu-GFLOP/s")
				}
			})
		}
	}
}
