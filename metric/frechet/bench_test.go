package frechet

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// inceptionLike returns n×d rows shaped like Inception pool3 features:
// non-negative, correlated through a rank-16 component, and float32 values
// widened to float64, as dataio hands them over from a float32 .npy.
func inceptionLike(seed uint64, n, d int) *mat.Dense {
	rng := rand.New(rand.NewPCG(seed, 99))
	const k = 16
	u := randn(rng, n, k)
	v := randn(rng, k, d)
	x := mat.NewDense(n, d, nil)
	raw := x.RawMatrix()
	for i := 0; i < n; i++ {
		ui := u.RawRowView(i)
		row := raw.Data[i*raw.Stride : i*raw.Stride+d]
		for j := range row {
			s := 0.3 * rng.ExpFloat64()
			for l := 0; l < k; l++ {
				s += 0.05 * ui[l] * v.At(l, j)
			}
			row[j] = float64(float32(math.Max(s, 0)))
		}
	}
	return x
}

func skipBig(b *testing.B) {
	if testing.Short() {
		b.Skip("10,000 × 2048 benchmark skipped in -short mode")
	}
}

// BenchmarkFID10000x2048 is the end-to-end performance figure: statistics of
// two 10,000 × 2048 float32 feature sets, then the Fréchet distance.
// pytorch-fid takes about 4.5 s + 13-15 s on this kind of machine.
func BenchmarkFID10000x2048(b *testing.B) {
	skipBig(b)
	x := inceptionLike(1, 10000, 2048)
	y := inceptionLike(2, 10000, 2048)
	b.ResetTimer()
	for b.Loop() {
		fd, err := Distance(StatsOf(x, 1), StatsOf(y, 1))
		if err != nil || math.IsNaN(fd) {
			b.Fatal(fd, err)
		}
	}
}

// BenchmarkStats10000x2048 is the statistics half of the FID benchmark,
// for one feature set.
func BenchmarkStats10000x2048(b *testing.B) {
	skipBig(b)
	x := inceptionLike(1, 10000, 2048)
	b.ResetTimer()
	for b.Loop() {
		StatsOf(x, 1)
	}
}

var (
	refOnce  sync.Once
	refStats [2]Stats
)

// benchStats returns two full-rank 2048-dimensional statistics (from 4096
// rows each), computed once per test binary.
func benchStats() [2]Stats {
	refOnce.Do(func() {
		refStats[0] = StatsOf(inceptionLike(3, 4096, 2048), 1)
		refStats[1] = StatsOf(inceptionLike(4, 4096, 2048), 1)
	})
	return refStats
}

// BenchmarkDistance2048 is the distance half of the FID benchmark: two
// full-rank 2048 × 2048 covariances.
func BenchmarkDistance2048(b *testing.B) {
	skipBig(b)
	s := benchStats()
	b.ResetTimer()
	for b.Loop() {
		if _, err := Distance(s[0], s[1]); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDistanceToRefSmallN is one online step's score: n rows against
// a cached d = 2048 reference. It must not do O(d³) work per call.
func BenchmarkDistanceToRefSmallN(b *testing.B) {
	skipBig(b)
	ref, err := NewReference(benchStats()[0])
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{5, 20, 100} {
		x := inceptionLike(uint64(n), n, 2048)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			for b.Loop() {
				if _, err := ref.DistanceToSamples(x, 0); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	// The uncached function: O(n d²), still no O(d³) step.
	x := inceptionLike(100, 100, 2048)
	b.Run("uncached/n=100", func(b *testing.B) {
		for b.Loop() {
			if _, err := DistanceToRef(x, ref.Stats(), 0); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkNewReference2048 is the one-off cost of caching a reference.
func BenchmarkNewReference2048(b *testing.B) {
	skipBig(b)
	s := benchStats()[0]
	b.ResetTimer()
	for b.Loop() {
		if _, err := NewReference(s); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkKID is KID with torch-fidelity's defaults (100 subsets of
// 1000 rows) on 2000 × 2048 feature sets.
func BenchmarkKID(b *testing.B) {
	skipBig(b)
	x := inceptionLike(5, 2000, 2048)
	y := inceptionLike(6, 2000, 2048)
	b.ResetTimer()
	for b.Loop() {
		if _, _, err := KID(context.Background(), x, y, KIDSubsets, KIDSubsetSize, 1); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkKID10000x2048 is KID with torch-fidelity's defaults on the
// target size, two 10,000 × 2048 sets: 20,000 rows are too many for the
// whole kernel matrix (3.2 GB), and each pair of rows falls into one
// subset on average, so the subsets are computed one by one.
func BenchmarkKID10000x2048(b *testing.B) {
	skipBig(b)
	x := inceptionLike(7, 10000, 2048)
	y := inceptionLike(8, 10000, 2048)
	b.ResetTimer()
	for b.Loop() {
		if _, _, err := KID(context.Background(), x, y, KIDSubsets, KIDSubsetSize, 1); err != nil {
			b.Fatal(err)
		}
	}
}
