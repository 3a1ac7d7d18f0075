package jpeg

import (
	"bytes"
	"image"
	"image/color"
	stdjpeg "image/jpeg"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// synthetic makes a w×h picture with smooth gradients, edges and noise, so
// the encoder produces a realistic mix of coefficients.
func synthetic(w, h int) *image.RGBA {
	m := image.NewRGBA(image.Rect(0, 0, w, h))
	rng := rand.New(rand.NewPCG(1, 2))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			fx, fy := float64(x)/float64(w), float64(y)/float64(h)
			r := 128 + 100*math.Sin(6*fx+4*fy)
			g := 255 * fx
			b := 255 * fy
			if (x/64+y/48)%5 == 0 {
				r, g, b = 240, 20, 40
			}
			n := rng.NormFloat64() * 10
			m.SetRGBA(x, y, color.RGBA{clampF(r + n), clampF(g + n), clampF(b - n), 255})
		}
	}
	return m
}

func clampF(v float64) uint8 { return uint8(min(max(math.Round(v), 0), 255)) }

// BenchmarkDecode compares this package with image/jpeg on baseline 4:2:0
// files: a 299×299 fixture made by Pillow and a 1024×1024 image encoded by
// image/jpeg at quality 90.
func BenchmarkDecode(b *testing.B) {
	small, err := os.ReadFile(filepath.Join("testdata", "q75_420_299x299.jpg"))
	if err != nil {
		b.Fatal(err)
	}
	var big bytes.Buffer
	if err := stdjpeg.Encode(&big, synthetic(1024, 1024), &stdjpeg.Options{Quality: 90}); err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		data []byte
	}{{"299x299", small}, {"1024x1024", big.Bytes()}} {
		b.Run(tc.name+"/genlens", func(b *testing.B) {
			b.SetBytes(int64(len(tc.data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Decode(bytes.NewReader(tc.data)); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(tc.name+"/stdlib", func(b *testing.B) {
			b.SetBytes(int64(len(tc.data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := stdjpeg.Decode(bytes.NewReader(tc.data)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
