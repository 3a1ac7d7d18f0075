package inception

import (
	"context"
	"path/filepath"
	"syscall"
	"testing"

	"genlens/features"
	"genlens/internal/shareddata"
	"genlens/linalg"
)

// BenchmarkForward measures images/s of the forward pass at batch 8 on
// the random-weight fixture network (same shapes as the real one); the
// anchor is PyTorch 1.13 on CPU, 8.4 images/s on the 2-core machine.
func BenchmarkForward(b *testing.B) {
	m := randomModel(b)
	names, err := features.ListImages(filepath.Join(shareddata.Path(b, fixtureDir), "images"), false)
	if err != nil {
		b.Fatal(err)
	}
	batch := make([][]float32, 8)
	for i := range batch {
		if batch[i], err = LoadImage(names[i], ModePyTorchFID); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("BLAS backend: %s", linalg.Backend())
	b.ResetTimer()
	cpu0 := cpuSeconds()
	for i := 0; i < b.N; i++ {
		if _, err := m.Forward(context.Background(), batch, 0); err != nil {
			b.Fatal(err)
		}
	}
	images := float64(b.N * len(batch))
	b.ReportMetric(images/b.Elapsed().Seconds(), "images/s")
	// On a shared machine the wall clock measures the neighbours too;
	// CPU time per image does not (an idle machine with P cores runs
	// about P / (CPU-s per image) images/s).
	b.ReportMetric((cpuSeconds()-cpu0)/images*1000, "cpu-ms/image")
}

func BenchmarkLoad(b *testing.B) {
	p := shareddata.Path(b, filepath.Join(fixtureDir, "inception_random.pth"))
	for i := 0; i < b.N; i++ {
		if _, err := Load(p); err != nil {
			b.Fatal(err)
		}
	}
}

// cpuSeconds is the user and system CPU time of this process so far.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime)
}
