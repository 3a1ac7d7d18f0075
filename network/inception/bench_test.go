package inception

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/genlens/genlens/internal/tensor/simdblas"

	"github.com/genlens/genlens/internal/tensor/linalg"
	"github.com/genlens/genlens/internal/testkit/shareddata"
	"github.com/genlens/genlens/network/features"
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

// BenchmarkConv runs one image through a convolution of each kind in the
// network (random weights, the network's shapes), in each form the
// pure-Go build may use, so that a regression shows which kind it hits.
func BenchmarkConv(b *testing.B) {
	for _, s := range []struct {
		name                               string
		cin, cout, kh, kw, stride, pad, hw int
	}{
		{"stem3x3s2", 3, 32, 3, 3, 2, 0, 299},
		{"stem2a3x3", 32, 32, 3, 3, 1, 0, 149},
		{"stem3x3", 32, 64, 3, 3, 1, 1, 147},
		{"4a3x3", 80, 192, 3, 3, 1, 0, 73},
		{"5-1x1", 288, 64, 1, 1, 1, 0, 35},
		{"5-5x5", 48, 64, 5, 5, 1, 2, 35},
		{"5-3x3", 96, 96, 3, 3, 1, 1, 35},
		{"5-3x3a", 64, 96, 3, 3, 1, 1, 35},
		{"6a-3x3s2", 288, 384, 3, 3, 2, 0, 35},
		{"6-1x1", 768, 192, 1, 1, 1, 0, 17},
		{"6-1x7", 160, 160, 1, 7, 1, 3, 17},
		{"6-7x1", 160, 160, 7, 1, 1, 3, 17},
		{"7-1x1", 2048, 448, 1, 1, 1, 0, 8},
		{"7-3x3", 448, 384, 3, 3, 1, 1, 8},
		{"7-1x3", 384, 384, 1, 3, 1, 1, 8},
		{"7-3x1", 384, 384, 3, 1, 1, 1, 8},
	} {
		rng := rand.New(rand.NewPCG(5, 6))
		k := s.cin * s.kh * s.kw
		cv := &conv{cin: s.cin, cout: s.cout, kh: s.kh, kw: s.kw, stride: s.stride, w: make([]float32, s.cout*k), b: make([]float32, s.cout)}
		if s.kh > 1 {
			cv.ph = s.pad
		}
		if s.kw > 1 {
			cv.pw = s.pad
		}
		for i := range cv.w {
			cv.w[i] = float32(rng.NormFloat64() * 0.1)
		}
		in := fmap{s.cin, s.hw, s.hw, make([]float32, s.cin*s.hw*s.hw)}
		for i := range in.d {
			in.d[i] = float32(rng.NormFloat64())
		}
		forms := map[string]*conv{}
		if !linalg.SgemmKernel() {
			forms["openblas"] = cv
		} else {
			p := *cv
			p.packed = simdblas.Pack(s.cout, k, cv.w, k)
			forms["im2col"] = &p
			if s.kh == 3 && s.kw == 3 && s.stride == 1 {
				wg4 := *cv
				wg4.wg = newWinograd4(s.cout, s.cin, cv.w)
				forms["winograd4"] = &wg4
			}
			if sp := (convSpec{"", s.cin, s.cout, s.kh, s.kw, s.stride, cv.ph, cv.pw}); useWinograd1D(sp) {
				w1 := *cv
				r := max(s.kh, s.kw)
				w1.w1 = newWinograd1D(s.cout, s.cin, r, s.kw == 1, winograd1dForms[r], cv.w)
				forms["winograd1d"] = &w1
			}
		}
		for form, cv := range forms {
			b.Run(s.name+"/"+form, func(b *testing.B) {
				var scratch []float32
				ar := new(arena)
				cpu0 := cpuSeconds()
				for b.Loop() {
					cv.apply(in, nil, 0, &scratch, ar)
					ar.reset()
				}
				// CPU time, which the neighbours of a shared machine
				// do not inflate as they do the wall clock.
				b.ReportMetric((cpuSeconds()-cpu0)*1e3/float64(b.N), "cpu-ms/op")
			})
		}
	}
}

// BenchmarkPool runs one image's worth of each pool of the network
// (the map sizes and channels it pools).
func BenchmarkPool(b *testing.B) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, s := range []struct {
		name          string
		c, hw, stride int
		avg           bool
	}{
		{"max-s2-147", 64, 147, 2, false},
		{"max-s2-71", 192, 71, 2, false},
		{"max-s2-35", 288, 35, 2, false},
		{"max-s2-17", 768, 17, 2, false},
		{"max-s1-8", 2048, 8, 1, false},
		{"avg-35", 288, 35, 1, true},
		{"avg-17", 768, 17, 1, true},
		{"avg-8", 1280, 8, 1, true},
	} {
		in := fmap{s.c, s.hw, s.hw, make([]float32, s.c*s.hw*s.hw)}
		for i := range in.d {
			in.d[i] = float32(rng.NormFloat64())
		}
		b.Run(s.name, func(b *testing.B) {
			ar := new(arena)
			cpu0 := cpuSeconds()
			for b.Loop() {
				if s.avg {
					avgPool(in, ar)
				} else {
					maxPool(in, s.stride, 2-s.stride, nil, 0, ar)
				}
				ar.reset()
			}
			b.ReportMetric((cpuSeconds()-cpu0)*1e3/float64(b.N), "cpu-ms/op")
		})
	}
}

// BenchmarkForwardDims measures images/s of the embedder of each
// --dims output at batch 8 on the fixture network, against "full", the
// whole pass every output used to run (Forward).
func BenchmarkForwardDims(b *testing.B) {
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
	run := func(b *testing.B, forward func() error) {
		cpu0 := cpuSeconds()
		for b.Loop() {
			if err := forward(); err != nil {
				b.Fatal(err)
			}
		}
		images := float64(b.N * len(batch))
		b.ReportMetric(images/b.Elapsed().Seconds(), "images/s")
		b.ReportMetric((cpuSeconds()-cpu0)/images*1000, "cpu-ms/image")
	}
	ctx := context.Background()
	b.Run("full", func(b *testing.B) {
		run(b, func() error { _, err := m.Forward(ctx, batch, 0); return err })
	})
	for _, o := range []Output{Out64, Out192, Out768, Out2048} {
		e := NewEmbedder(ModePyTorchFID, o, "", 0, func() (*Model, error) { return m, nil })
		b.Run(string(o), func(b *testing.B) {
			run(b, func() error { _, err := e.Forward(ctx, batch); return err })
		})
	}
}
