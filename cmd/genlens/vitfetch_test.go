package main

import (
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/internal/testkit/hubtest"
	"github.com/genlens/genlens/internal/testkit/vittest"
)

// TestFeaturesFetchDINOv2: features --embedder dinov2-vits14 without
// --weights fetches the published file (from a fake torch hub serving a
// random-weight checkpoint of the published names and shapes) once into
// $TORCH_HOME/hub/checkpoints, reporting the download; a second run, the
// server gone, finds it there and computes the same features with the
// same weights' hash.
func TestFeaturesFetchDINOv2(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HOME", dir)
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("TORCH_HOME", filepath.Join(dir, "torch"))
	t.Setenv("GENLENS_CACHE", filepath.Join(dir, "genlens"))
	t.Setenv("GENLENS_WEIGHTS", "")
	t.Setenv("HF_HUB_OFFLINE", "")
	file, err := vittest.DINOv2("dinov2-vits14")
	if err != nil {
		t.Fatal(err)
	}
	pub := vittest.Publish(t, "dinov2-vits14", file)
	imgs := filepath.Join(dir, "imgs")
	os.Mkdir(imgs, 0o755)
	for k, size := range [][2]int{{48, 36}, {30, 50}} {
		img := image.NewRGBA(image.Rect(0, 0, size[0], size[1]))
		for y := range size[1] {
			for x := range size[0] {
				img.Set(x, y, color.RGBA{uint8(5 * x), uint8(7 * y), uint8(90 * k), 255})
			}
		}
		f, err := os.Create(filepath.Join(imgs, "img"+string(rune('a'+k))+".png"))
		if err != nil {
			t.Fatal(err)
		}
		if err := png.Encode(f, img); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	features := func(run string) ([]float64, string, string) {
		t.Helper()
		out := filepath.Join(dir, run+".npy")
		code, stdout, stderr := cli(t, "features", imgs, "--embedder", "dinov2-vits14", "--out", out, "--no-cache", "--json")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", run, code, stderr)
		}
		var res struct {
			Images, Dims int
			Weights      struct{ Path, SHA256 string }
		}
		if err := json.Unmarshal([]byte(stdout), &res); err != nil || res.Images != 2 || res.Dims != 384 {
			t.Fatalf("%s: %v: %s", run, err, stdout)
		}
		if want := filepath.Join(dir, "torch", "hub", "checkpoints", "dinov2_vits14_pretrain.pth"); res.Weights.Path != want {
			t.Errorf("%s: weights %s, want %s", run, res.Weights.Path, want)
		}
		a, err := dataio.ReadArray(out, dataio.ReadOptions{})
		if err != nil || !slices.Equal(a.Shape, []int{2, 384}) {
			t.Fatalf("%s: %v %v", run, a, err)
		}
		return a.Data, res.Weights.SHA256, stderr
	}
	first, sum, stderr := features("first")
	if sum != hubtest.SHA256(file) {
		t.Errorf("weights sha256 %s, want the served file's %s", sum, hubtest.SHA256(file))
	}
	if !strings.Contains(stderr, "downloading (once) "+pub.URL) || pub.Gets() != 1 {
		t.Errorf("fetched %d times; stderr %q", pub.Gets(), stderr)
	}
	if slices.Equal(first[:384], first[384:]) {
		t.Error("the two images have the same features")
	}
	pub.Server.Close()
	second, sum2, stderr := features("second")
	if sum2 != sum || strings.Contains(stderr, "downloading") {
		t.Errorf("from the cache: weights sha256 %s, stderr %q", sum2, stderr)
	}
	if !slices.Equal(first, second) {
		t.Error("the features from the cached file differ")
	}
}
