package inception

import (
	"context"
	"path/filepath"
	"testing"

	"genlens/internal/shareddata"
	"genlens/linalg"
)

// BenchmarkForward measures images/s of the forward pass at batch 8 on
// the random-weight fixture network (same shapes as the real one); the
// anchor is PyTorch 1.13 on CPU, 8.4 images/s on the 2-core machine.
func BenchmarkForward(b *testing.B) {
	m := randomModel(b)
	names, err := ListImages(filepath.Join(shareddata.Path(b, fixtureDir), "images"), false)
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
	for i := 0; i < b.N; i++ {
		if _, err := m.Forward(context.Background(), batch, 0); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*len(batch))/b.Elapsed().Seconds(), "images/s")
}

func BenchmarkLoad(b *testing.B) {
	p := shareddata.Path(b, filepath.Join(fixtureDir, "inception_random.pth"))
	for i := 0; i < b.N; i++ {
		if _, err := Load(p); err != nil {
			b.Fatal(err)
		}
	}
}
