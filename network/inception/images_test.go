package inception

import (
	"math/rand/v2"
	"testing"

	"github.com/genlens/genlens/internal/resample"
	"github.com/genlens/genlens/network/features"
)

// TestResize pins both bilinear resizes on hand-computed values.
func TestResize(t *testing.T) {
	src := []float32{0, 10, 20, 30}
	for _, tc := range []struct {
		name string
		fn   func(src []float32, h, w int, dst []float32, oh, ow int)
		want []float32
	}{
		// torch, align_corners=False: x = (i+0.5)·4/8 − 0.5 clamped at 0.
		{"torch up", resizeTorch, []float32{0, 2.5, 7.5, 12.5, 17.5, 22.5, 27.5, 30}},
		// TF1: x = i·4/8, upper tap clamped to the last pixel.
		{"tf up", resample.BilinearTF1, []float32{0, 5, 10, 15, 20, 25, 30, 30}},
	} {
		dst := make([]float32, 8)
		tc.fn(src, 1, 4, dst, 1, 8)
		for i := range dst {
			if d := dst[i] - tc.want[i]; d > 1e-5 || d < -1e-5 {
				t.Errorf("%s: got %v, want %v", tc.name, dst, tc.want)
				break
			}
		}
	}
	// Downsampling 4 → 2: torch averages neighbours (x = 0.5, 2.5), TF1
	// picks every other pixel (x = 0, 2).
	dst := make([]float32, 2)
	resizeTorch(src, 1, 4, dst, 1, 2)
	if dst[0] != 5 || dst[1] != 25 {
		t.Errorf("torch down: %v", dst)
	}
	resample.BilinearTF1(src, 1, 4, dst, 1, 2)
	if dst[0] != 0 || dst[1] != 20 {
		t.Errorf("tf down: %v", dst)
	}
	// At 299×299 the three resizes are the identity and only the scaling
	// remains.
	img := &features.RGB{H: Size, W: Size, Pix: make([]uint8, 3*Size*Size)}
	img.Pix[5] = 255
	for _, tc := range []struct {
		mode       Mode
		zero, full float32
	}{{ModePyTorchFID, -1, 1}, {ModeTF, -1, 127.0 / 128}, {ModeClean, -1, 127.0 / 128}} {
		x, err := Preprocess(img, tc.mode)
		if err != nil {
			t.Fatal(err)
		}
		if x[0] != tc.zero || x[5] != tc.full {
			t.Errorf("%s: got %g, %g, want %g, %g", tc.mode, x[0], x[5], tc.zero, tc.full)
		}
	}
	if _, err := Preprocess(img, "bogus"); err == nil {
		t.Error("unknown mode accepted")
	}
}

// TestResizeTorchIdentity: at the network's own size torch's taps are
// (i, i+1) with weights exactly (1, 0), so the resize is a copy, which
// resizeTorch makes instead of computing them.
func TestResizeTorchIdentity(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	src := make([]float32, Size*Size)
	for i := range src {
		src[i] = float32(rng.IntN(256)) / 255
	}
	want, got := make([]float32, len(src)), make([]float32, len(src))
	resizeTaps(src, Size, Size, want, Size, Size)
	resizeTorch(src, Size, Size, got, Size, Size)
	for i := range src {
		if want[i] != src[i] || got[i] != src[i] {
			t.Fatalf("value %d: taps %v, resizeTorch %v, source %v", i, want[i], got[i], src[i])
		}
	}
}
