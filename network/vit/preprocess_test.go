package vit

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/internal/resample"
	"github.com/genlens/genlens/network/features"
)

// TestPresetsPillow checks the Pillow presets against Pillow 9.4 run on
// the same images (testdata/make_fixtures.py, preprocess_fixture): a
// downscale, an upscale of the short side with a crop, and a square.
func TestPresetsPillow(t *testing.T) {
	npz := filepath.Join("testdata", "preprocess.npz")
	read := func(key string) *dataio.Array {
		a, err := dataio.ReadArray(npz, dataio.ReadOptions{Key: key})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	const side = 28
	for i := 0; i < 3; i++ {
		src := read(fmt.Sprintf("src_%d", i))
		img := &features.RGB{H: src.Shape[1], W: src.Shape[2], Pix: make([]uint8, len(src.Data))}
		for j, v := range src.Data {
			img.Pix[j] = uint8(v)
		}
		for _, tc := range []struct {
			key       string
			p         Preset
			mean, std [3]float64
		}{{"dgm", PresetDGMEval, imagenetMean, imagenetStd}, {"clip", PresetCLIP, clipMean, clipStd}, {"cmmd", PresetCMMD, clipMean, clipStd}} {
			want := read(fmt.Sprintf("%s_%d", tc.key, i))
			px := make([]uint8, len(want.Data))
			for j, v := range want.Data {
				px[j] = uint8(v)
			}
			exp := toTensor(px, side, tc.mean, tc.std)
			got, err := Preprocess(img, tc.p, side)
			if err != nil {
				t.Fatal(err)
			}
			bad := 0
			for j := range exp {
				if got[j] != exp[j] {
					bad++
				}
			}
			if bad > 0 {
				t.Errorf("%dx%d %s: %d of %d inputs differ from Pillow's", img.W, img.H, tc.p, bad, len(exp))
			}
		}
	}
}

// TestPresetTorchFidelity checks the normalisation of the torch-fidelity
// preset on a constant image, which its bilinear resize keeps constant:
// (v − 255·m)/(255·s).
func TestPresetTorchFidelity(t *testing.T) {
	img := &features.RGB{H: 5, W: 7, Pix: make([]uint8, 3*35)}
	for c := 0; c < 3; c++ {
		for j := 0; j < 35; j++ {
			img.Pix[c*35+j] = uint8(60 * (c + 1))
		}
	}
	x, err := Preprocess(img, PresetTorchFidelity, 9)
	if err != nil {
		t.Fatal(err)
	}
	for c := 0; c < 3; c++ {
		want := (float32(60*(c+1)) - float32(255*imagenetMean[c])) / float32(255*imagenetStd[c])
		for _, v := range x[c*81 : (c+1)*81] {
			if v != want {
				t.Fatalf("channel %d: %v, want %v", c, v, want)
			}
		}
	}
}

func TestParsePreset(t *testing.T) {
	for _, tc := range []struct{ net, in, want string }{
		{"dinov2-vitl14", "", "dgm-eval"}, {"dinov2-vitl14", "Torch-Fidelity", "torch-fidelity"},
		{"clip-vitb32", "", "clip"}, {"clip-vitl14-336", "", "cmmd"}, {"clip-vitb32", "cmmd", "cmmd"},
		{"dinov2-vits14", "clip", "error"}, {"clip-vitb32", "dgm-eval", "error"},
	} {
		p, err := ParsePreset(Configs[tc.net], tc.in)
		got := string(p)
		if err != nil {
			got = "error"
		}
		if got != tc.want {
			t.Errorf("%s %q: %s (%v), want %s", tc.net, tc.in, got, err, tc.want)
		}
	}
}

// Every preset takes an extremely elongated image (a row or a column of
// pixels) without a huge intermediate or a division by zero: CLIP's
// resize of the short side to 224 would make a 1×20000 image
// 224×4,480,000 (3 GB) before its centre crop, and now makes only the
// crop. A one-pixel-wide image is one colour across every row of the
// crop, at the colour of the pixels around the middle.
func TestPresetsElongated(t *testing.T) {
	const side = 224
	for _, size := range [][2]int{{1, 20000}, {20000, 1}, {2, 65536}, {1, 1}, {1, 100000}} {
		w, h := size[0], size[1]
		img := &features.RGB{W: w, H: h, Pix: make([]uint8, 3*w*h)}
		for i := range img.Pix {
			img.Pix[i] = 200 // a grey image: every preset's crop is that grey
		}
		for _, p := range []Preset{PresetCLIP, PresetCMMD, PresetDGMEval, PresetTorchFidelity} {
			name := fmt.Sprintf("%dx%d %s", w, h, p)
			got, err := Preprocess(img, p, side)
			if err != nil && max(w, h) > resample.MaxSize && (p == PresetDGMEval || p == PresetTorchFidelity) {
				// Resized whole (no crop first), a side past the
				// resampler's bound is refused; the pipeline names the
				// file.
				t.Logf("%s: %v", name, err)
				continue
			}
			if err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
			if len(got) != 3*side*side {
				t.Fatalf("%s: %d inputs, want %d", name, len(got), 3*side*side)
			}
			// A constant image stays constant through every resize and
			// crop: each plane is one value.
			for c := 0; c < 3; c++ {
				plane := got[c*side*side : (c+1)*side*side]
				for _, v := range plane {
					if v != plane[0] {
						t.Fatalf("%s: channel %d is not constant", name, c)
					}
				}
			}
		}
	}
}
