package features

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	stdjpeg "image/jpeg"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// benchPicture is a w×h picture of smooth gradients, flat patches and
// noise, so that a JPEG of it has a realistic mix of coefficients.
func benchPicture(w, h int) *image.RGBA {
	m := image.NewRGBA(image.Rect(0, 0, w, h))
	rng := rand.New(rand.NewPCG(1, 2))
	c := func(v float64) uint8 { return uint8(min(max(math.Round(v), 0), 255)) }
	for y := range h {
		for x := range w {
			fx, fy := float64(x)/float64(w), float64(y)/float64(h)
			r, g, b := 128+100*math.Sin(6*fx+4*fy), 255*fx, 255*fy
			if (x/64+y/48)%5 == 0 {
				r, g, b = 240, 20, 40
			}
			n := rng.NormFloat64() * 10
			m.SetRGBA(x, y, color.RGBA{c(r + n), c(g + n), c(b - n), 255})
		}
	}
	return m
}

// BenchmarkDecodeImage decodes baseline 4:2:0 JPEGs of 299×299 and
// 1024×1024 (image/jpeg's encoder, quality 90, from disk) to the RGB the
// networks take: "genlens" is Decode (header, scan count, the
// libjpeg-turbo-exact decoder, ToRGB); "image-jpeg" is Go's image/jpeg
// and ToRGB, what genlens used before; "PIL" is Pillow's
// Image.open(f).convert("RGB") timed in Python over the same number of
// iterations (skipped without /usr/bin/python3 and PIL).
func BenchmarkDecodeImage(b *testing.B) {
	dir := b.TempDir()
	for _, n := range []int{299, 1024} {
		var buf bytes.Buffer
		if err := stdjpeg.Encode(&buf, benchPicture(n, n), &stdjpeg.Options{Quality: 90}); err != nil {
			b.Fatal(err)
		}
		name := fmt.Sprintf("%dx%d.jpg", n, n)
		if err := os.WriteFile(filepath.Join(dir, name), buf.Bytes(), 0o644); err != nil {
			b.Fatal(err)
		}
		fsys := os.DirFS(dir)
		b.Run(fmt.Sprintf("%dx%d/genlens", n, n), func(b *testing.B) {
			b.SetBytes(int64(n * n * 3))
			for b.Loop() {
				if _, err := Decode(fsys, name); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("%dx%d/image-jpeg", n, n), func(b *testing.B) {
			b.SetBytes(int64(n * n * 3))
			for b.Loop() {
				f, err := fsys.Open(name)
				if err != nil {
					b.Fatal(err)
				}
				m, err := stdjpeg.Decode(f)
				f.Close()
				if err != nil {
					b.Fatal(err)
				}
				ToRGB(m)
			}
		})
		b.Run(fmt.Sprintf("%dx%d/PIL", n, n), func(b *testing.B) {
			if err := exec.Command(pilPython, "-c", "import PIL").Run(); err != nil {
				b.Skipf("%s cannot import PIL", pilPython)
			}
			b.SetBytes(int64(n * n * 3))
			script := `
import sys, time
from PIL import Image
p, n = sys.argv[1], int(sys.argv[2])
Image.open(p).convert("RGB")
t = time.perf_counter_ns()
for _ in range(n):
    Image.open(p).convert("RGB")
print(time.perf_counter_ns() - t)
`
			out, err := exec.Command(pilPython, "-c", script, filepath.Join(dir, name), strconv.Itoa(b.N)).Output()
			if err != nil {
				b.Fatal(err)
			}
			ns, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
			if err != nil {
				b.Fatal(err)
			}
			// Python's own clock: the process start is not the decoder's.
			b.ReportMetric(ns/float64(b.N), "ns/op")
			b.ReportMetric(float64(n*n*3)/(ns/float64(b.N))*1e9/1e6, "MB/s")
		})
	}
}
