package disentangle

import (
	"context"
	"math/rand/v2"
	"syscall"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/internal/demo/imagesynth"
	"github.com/genlens/genlens/internal/tensor/linalg"
	"github.com/genlens/genlens/internal/testkit/shareddata"
	"github.com/genlens/genlens/metric/cluster"
	"github.com/genlens/genlens/metric/kernel"
)

// The performance target: the pixel CKA matrix of 64x64 grey images (4096
// pixels) from 1000 training images in batches of 100 — ten rank-5050
// updates of a 4096x4096 matrix, about 1.7e12 flops without symmetry —
// under 240 s pure Go and under 40 s with -tags openblas.
// Run: go test ./disentangle -run XXX -bench PixelCKA4096 -benchtime 1x -count 3
func BenchmarkPixelCKA4096x1000(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	x := imagesynth.Faces(r, 1000, 64, 64)
	gamma := 1 / kernel.MedianSqDist(x)
	b.Logf("backend: %s", linalg.Backend())
	cpu0 := cpuSeconds()
	for b.Loop() {
		if _, err := PixelCKA(context.Background(), x, Grid{64, 64, 1}, gamma, 100, nil); err != nil {
			b.Fatal(err)
		}
	}
	// On a shared machine the wall clock measures the neighbours too;
	// the CPU time does not.
	b.ReportMetric((cpuSeconds()-cpu0)/float64(b.N), "cpu-s/op")
}

func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime)
}

// The performance target: clustering 4096 pixels under 10 s. "rows" is the
// authors' distance (Euclidean between rows of the CKA matrix: a
// 4096x4096x4096 product) followed by average linkage; "agglomerate" is
// the nearest-neighbour chain alone.
// Run: go test ./disentangle -run XXX -bench Cluster4096 -benchtime 1x -count 3
func BenchmarkCluster4096(b *testing.B) {
	r := rand.New(rand.NewPCG(2, 2))
	x := imagesynth.Faces(r, 100, 64, 64)
	cka, err := PixelCKA(context.Background(), x, Grid{64, 64, 1}, 1/kernel.MedianSqDist(x), 20, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("rows+average", func(b *testing.B) {
		for b.Loop() {
			if _, err := cluster.Agglomerate(mustDist(cka, RowDistance), cluster.Average); err != nil {
				b.Fatal(err)
			}
		}
	})
	d := mustDist(cka, RowDistance)
	b.Run("agglomerate-average", func(b *testing.B) {
		for b.Loop() {
			if _, err := cluster.Agglomerate(d, cluster.Average); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("one-minus-cka+average", func(b *testing.B) {
		for b.Loop() {
			if _, err := cluster.Agglomerate(mustDist(cka, OneMinusCKA), cluster.Average); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// CMS of 1350 generated against 1350 test images (the ChestMNIST
// numbers of Gruber, Ziegler & Buettner, "Disentangling Mean Embeddings
// for Better Diagnostics of Image Generators", 2024), 28x28 pixels in 5 clusters, batches of 150.
// Run: go test ./disentangle -run XXX -bench Compare -count 3
func BenchmarkCompare1350x784(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 3))
	x, y := imagesynth.Faces(r, 1350, 28, 28), imagesynth.Faces(r, 1350, 28, 28)
	labels := make([]int, 784)
	for p := range labels {
		labels[p] = (p % 28) / 6
	}
	for b.Loop() {
		if _, err := Compare(context.Background(), x, y, Grid{28, 28, 1}, labels, 1e-3, 150); err != nil {
			b.Fatal(err)
		}
	}
}

// Full-size Algorithm 1 on PneumoniaMNIST with the paper's ChestMNIST
// settings: 2000 training images in batches of 100 for CKA, 5 clusters,
// test (624) against validation (524) images.
// Run: go test ./disentangle -run XXX -bench RealPneumonia -benchtime 1x -count 3
func BenchmarkRealPneumoniaFull(b *testing.B) {
	path := shareddata.Path(b, "images/pneumoniamnist.npz")
	read := func(key string) *mat.Dense {
		a, err := dataio.ReadArray(path, dataio.ReadOptions{Key: key})
		if err != nil {
			b.Fatal(err)
		}
		x := mat.NewDense(a.Shape[0], 784, nil)
		for i, v := range a.Data {
			x.RawMatrix().Data[i] = v/127.5 - 1
		}
		return x
	}
	train, test, val := read("train_images"), read("test_images"), read("val_images")
	for b.Loop() {
		if _, err := Analyze(context.Background(), train, test, []*mat.Dense{val}, Grid{28, 28, 1}, Options{CKAImages: 2000}); err != nil {
			b.Fatal(err)
		}
	}
}

func mustDist(cka *mat.SymDense, d Distance) *mat.SymDense {
	out, err := PixelDistances(context.Background(), cka, d)
	if err != nil {
		panic(err)
	}
	return out
}
