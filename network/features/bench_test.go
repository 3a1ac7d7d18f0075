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

// timePIL returns the wall and CPU time per image of Pillow's
// Image.open(path).convert("RGB"), as Python measures it over a second
// (5 images at least).
func timePIL(path string) (ns, cpu float64, err error) {
	script := `
import sys, time
from PIL import Image
p = sys.argv[1]
Image.open(p).convert("RGB")
n, t, c = 0, time.perf_counter_ns(), time.process_time_ns()
while n < 5 or time.perf_counter_ns() - t < 1e9:
    Image.open(p).convert("RGB")
    n += 1
print(n, time.perf_counter_ns() - t, time.process_time_ns() - c)
`
	out, err := exec.Command(pilPython, "-c", script, path).Output()
	if err != nil {
		return 0, 0, err
	}
	f := strings.Fields(string(out))
	if len(f) != 3 {
		return 0, 0, fmt.Errorf("python printed %q", out)
	}
	var v [3]float64
	for i := range v {
		if v[i], err = strconv.ParseFloat(f[i], 64); err != nil {
			return 0, 0, fmt.Errorf("python printed %q", out)
		}
	}
	return v[1] / v[0], v[2] / v[0], nil
}

// reportCPU starts measuring the CPU time of a benchmark; the function it
// returns reports it per iteration.
func reportCPU(b *testing.B) func() {
	c0, ok := cpuTime()
	return func() {
		if c1, _ := cpuTime(); ok && b.N > 0 {
			b.ReportMetric(float64(c1-c0)/float64(b.N), "cpu-ns/op")
		}
	}
}

// BenchmarkDecodeImage decodes baseline 4:2:0 JPEGs of 299×299 and
// 1024×1024 (image/jpeg's encoder, quality 90, from disk) to the RGB the
// networks take: "genlens" is Decode (header, scan count, the
// libjpeg-turbo-exact decoder, ToRGB); "image-jpeg" is Go's image/jpeg
// and ToRGB, what genlens used before; "PIL" is Pillow's
// Image.open(f).convert("RGB") timed by Python itself for a second
// (skipped without /usr/bin/python3 and PIL). Besides the
// wall time, cpu-ns/op is the CPU time the process spent per image
// (Python's process_time for PIL), which other work on a shared machine
// disturbs less.
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
			defer reportCPU(b)()
			for b.Loop() {
				if _, err := Decode(fsys, name); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("%dx%d/image-jpeg", n, n), func(b *testing.B) {
			b.SetBytes(int64(n * n * 3))
			defer reportCPU(b)()
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
		var pilNS, pilCPU float64 // measured once per run, reported by every call
		b.Run(fmt.Sprintf("%dx%d/PIL", n, n), func(b *testing.B) {
			if b.N == 1 { // the first call of each run (and of each -count)
				if err := exec.Command(pilPython, "-c", "import PIL").Run(); err != nil {
					b.Skipf("%s cannot import PIL", pilPython)
				}
				var err error
				if pilNS, pilCPU, err = timePIL(filepath.Join(dir, name)); err != nil {
					b.Fatal(err)
				}
			}
			// Python's own clocks: its start-up is not the decoder's. The
			// iteration count the framework prints means nothing here.
			b.ReportMetric(pilNS, "ns/op")
			b.ReportMetric(float64(n*n*3)/pilNS*1e9/1e6, "MB/s")
			b.ReportMetric(pilCPU, "cpu-ns/op")
		})
	}
}
