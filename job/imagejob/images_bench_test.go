package imagejob

import (
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/genlens/genlens/internal/testkit/shareddata"
	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/network/inception"
)

// writePNGs writes n synthetic 256×256 RGB PNGs (smooth gradients with
// noise, so that they compress like photographs rather than like flat
// colour) into dir.
func writePNGs(tb testing.TB, dir string, n int, seed uint64) {
	tb.Helper()
	r := rand.New(rand.NewPCG(seed, 1))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	for i := 0; i < n; i++ {
		img := image.NewRGBA(image.Rect(0, 0, 256, 256))
		a, b := r.Float64()*255, r.Float64()*255
		for y := 0; y < 256; y++ {
			for x := 0; x < 256; x++ {
				v := func(s float64) uint8 { return uint8(max(0, min(255, s+8*r.NormFloat64()))) }
				img.Set(x, y, color.RGBA{v(a * float64(x) / 256), v(b * float64(y) / 256), v((a + b) / 2), 255})
			}
		}
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("%05d.png", i)))
		if err != nil {
			tb.Fatal(err)
		}
		if err := png.Encode(f, img); err != nil {
			tb.Fatal(err)
		}
		f.Close()
	}
}

// BenchmarkCompareFolders is FID of two folders of 50 PNGs (256×256)
// end to end, without the feature cache, on the random-weight fixture
// (the network costs the same as with the real weights). It reports
// images/s and where the time per image goes; the README's end-to-end
// figure of two folders of 2,000 PNGs is the same pipeline at scale.
func BenchmarkCompareFolders(b *testing.B) {
	weights := shareddata.Path(b, "fixtures/inception_random/inception_random.pth")
	dir := b.TempDir()
	writePNGs(b, filepath.Join(dir, "real"), 50, 1)
	writePNGs(b, filepath.Join(dir, "fake"), 50, 2)
	req := NewCompareRequest()
	req.Real, req.Fake, req.Weights, req.NoCache = filepath.Join(dir, "real"), filepath.Join(dir, "fake"), weights, true
	env := job.Env{Models: job.NewModelCache(0)}
	if _, err := job.CachedLoad(env.Models, "inception", weights, inception.Load); err != nil { // loaded once, outside the timing
		b.Fatal(err)
	}
	b.ResetTimer()
	var im *ImagesInfo
	for i := 0; i < b.N; i++ {
		res, err := Compare(context.Background(), env, req)
		if err != nil {
			b.Fatal(err)
		}
		im = res.Images
	}
	b.StopTimer()
	n := float64(im.Images)
	b.ReportMetric(n*float64(b.N)/b.Elapsed().Seconds(), "images/s")
	b.ReportMetric(float64(im.DecodeSeconds)/n*1e3, "decode-ms/image")
	b.ReportMetric(float64(im.NetworkSeconds)/n*1e3, "network-ms/image")
	b.ReportMetric(float64(im.WaitSeconds)/n*1e3, "wait-ms/image")
	b.ReportMetric(float64(im.FeatureSeconds)/n*1e3, "stats-ms/image")
}
