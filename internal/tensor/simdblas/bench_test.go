package simdblas

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// gemmShapes are the products of the image networks, m×n×k: rows of A
// (output channels or tokens), columns of B (pixels or features) and the
// inner dimension.
var gemmShapes = []struct {
	name    string
	m, n, k int
}{
	// DINOv2 ViT-S/14 and ViT-B/14 at 224² (257 tokens): qkv, attention
	// projection and the two MLP layers.
	{"vitS-qkv", 257, 1152, 384},
	{"vitS-proj", 257, 384, 384},
	{"vitS-mlp1", 257, 1536, 384},
	{"vitS-mlp2", 257, 384, 1536},
	{"vitB-proj", 257, 768, 768},
	// Inception-v3 at 299², one image: weights (cout × cin·kh·kw) times
	// the im2col band or the feature map.
	{"inc-stem3x3", 64, 21609, 288},
	{"inc-4a3x3", 192, 5041, 720},
	{"inc-5x1x1", 64, 1225, 288},
	{"inc-5x5x5", 64, 1225, 1200},
	{"inc-6x1x1", 192, 289, 768},
	{"inc-6x7x1", 192, 289, 1344},
	{"inc-7x1x1", 448, 64, 2048},
	{"inc-7x3x3", 384, 64, 4032},
}

// BenchmarkSgemm runs each shape through the SGEMM driver with every
// kernel the CPU has, on all workers.
func BenchmarkSgemm(b *testing.B) {
	for _, s := range gemmShapes {
		rng := rand.New(rand.NewPCG(1, 2))
		a, bb, c := randF32(rng, s.m*s.k), randF32(rng, s.k*s.n), make([]float32, s.m*s.n)
		for _, kn := range sgemmKernels() {
			if kn == sgemmGo {
				continue
			}
			b.Run(fmt.Sprintf("%s/%s", s.name, kn.name), func(b *testing.B) {
				for b.Loop() {
					gemm(kn, false, false, s.m, s.n, s.k, 1, a, s.k, bb, s.n, 0, c, s.n, full)
				}
				b.ReportMetric(2*float64(s.m*s.n*s.k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

// BenchmarkMulAddPacked runs the Inception shapes as package inception
// does: weights packed once, one image on the calling goroutine.
func BenchmarkMulAddPacked(b *testing.B) {
	defer func(k *kernel[float32]) { sgemmK = k }(sgemmK)
	for _, s := range gemmShapes {
		if s.name[:3] != "inc" {
			continue
		}
		rng := rand.New(rand.NewPCG(1, 2))
		a, bb, c := randF32(rng, s.m*s.k), randF32(rng, s.k*s.n), make([]float32, s.m*s.n)
		for _, kn := range sgemmKernels() {
			if kn == sgemmGo {
				continue
			}
			sgemmK = kn
			p := Pack(s.m, s.k, a, s.k)
			b.Run(fmt.Sprintf("%s/%s", s.name, kn.name), func(b *testing.B) {
				for b.Loop() {
					MulAddPackedReLU(p, s.n, bb, s.n, c, s.n)
				}
				b.ReportMetric(2*float64(s.m*s.n*s.k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}
