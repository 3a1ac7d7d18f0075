package imagejob

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/genlens/genlens/internal/tensor/linalg"
	"github.com/genlens/genlens/job"
)

// writeFeaturesNPY writes n×d float32 rows shaped like Inception pool3
// features (non-negative, correlated through a rank-16 component) as a
// little-endian .npy file, as pytorch-fid's feature dumps are.
func writeFeaturesNPY(tb testing.TB, path string, seed uint64, n, d int) {
	tb.Helper()
	rng := rand.New(rand.NewPCG(seed, 99))
	const k = 16
	v := make([]float64, k*d)
	for i := range v {
		v[i] = 0.05 * rng.NormFloat64()
	}
	header := fmt.Sprintf("{'descr': '<f4', 'fortran_order': False, 'shape': (%d, %d), }", n, d)
	for (10+len(header)+1)%64 != 0 {
		header += " "
	}
	header += "\n"
	buf := make([]byte, 0, 10+len(header)+4*n*d)
	buf = append(buf, "\x93NUMPY\x01\x00"...)
	buf = binary.LittleEndian.AppendUint16(buf, uint16(len(header)))
	buf = append(buf, header...)
	u := make([]float64, k)
	for i := 0; i < n; i++ {
		for l := range u {
			u[l] = rng.NormFloat64()
		}
		for j := 0; j < d; j++ {
			s := 0.3 * rng.ExpFloat64()
			for l := range u {
				s += u[l] * v[l*d+j]
			}
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(float32(math.Max(s, 0))))
		}
	}
	if err := os.WriteFile(path, buf, 0o644); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkCompareFID10000x2048 is FID end to end as `genlens compare
// --metrics fid` runs it: two 10,000 × 2048 float32 .npy files (80 MB
// each) read, their statistics, the distance. pytorch-fid's own functions
// take 5.9 s for the same job on a 2-core machine.
func BenchmarkCompareFID10000x2048(b *testing.B) {
	if testing.Short() {
		b.Skip("10,000 × 2048 benchmark skipped in -short mode")
	}
	dir := b.TempDir()
	real, fake := filepath.Join(dir, "real.npy"), filepath.Join(dir, "fake.npy")
	writeFeaturesNPY(b, real, 1, 10000, 2048)
	writeFeaturesNPY(b, fake, 2, 10000, 2048)
	b.Logf("backend: %s", linalg.Backend())
	req := NewCompareRequest()
	req.Real, req.Fake, req.Metrics = real, fake, "fid"
	b.ResetTimer()
	cpu0 := cpuSeconds()
	for b.Loop() {
		res, err := Compare(context.Background(), job.Env{}, req)
		if err != nil || res.FID == nil || math.IsNaN(float64(*res.FID)) {
			b.Fatal(res, err)
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
