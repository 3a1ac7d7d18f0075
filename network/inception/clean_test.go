package inception

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/internal/resample"
	"github.com/genlens/genlens/internal/testkit/shareddata"
	"github.com/genlens/genlens/network/features"
)

// cleanInputs is testdata/clean_inputs.json: clean-fid's network input for
// each fixture image, computed with Pillow and numpy by
// testdata/clean_inputs.py.
type cleanInputs struct {
	Pillow string `json:"pillow"`
	Images []struct {
		Name    string             `json:"name"`
		PILMode string             `json:"pil_mode"`
		W       int                `json:"width"`
		H       int                `json:"height"`
		SHA256  string             `json:"sha256"`
		Samples map[string]float64 `json:"samples"`
	} `json:"images"`
}

// TestCleanInputs checks mode clean's network input bit for bit against
// clean-fid's steps run with Pillow on the 16 fixture images (grey,
// palette, RGBA and RGB; up- and downscaled to 299, and one already at
// 299).
func TestCleanInputs(t *testing.T) {
	dir := shareddata.Path(t, filepath.Join(fixtureDir, "images"))
	b, err := os.ReadFile("testdata/clean_inputs.json")
	if err != nil {
		t.Fatal(err)
	}
	var want cleanInputs
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	if len(want.Images) != 16 {
		t.Fatalf("%d images in testdata/clean_inputs.json, want 16", len(want.Images))
	}
	for _, w := range want.Images {
		x, err := LoadImage(filepath.Join(dir, w.Name), ModeClean)
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range w.Samples {
			i, _ := strconv.Atoi(k)
			if float64(x[i]) != v {
				t.Errorf("%s (%s %dx%d): input[%d] = %v, clean-fid (Pillow %s) %v", w.Name, w.PILMode, w.W, w.H, i, x[i], want.Pillow, v)
			}
		}
		raw := make([]byte, 4*len(x))
		for i, v := range x {
			binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(v))
		}
		if s := sha256.Sum256(raw); hex.EncodeToString(s[:]) != w.SHA256 {
			t.Errorf("%s (%s %dx%d): input differs from clean-fid's (Pillow %s)", w.Name, w.PILMode, w.W, w.H, want.Pillow)
		}
	}
}

// TestCleanFeatures checks what the network sees in mode clean: the
// features of LoadImage(…, ModeClean) are the network's features of
// Pillow's float bicubic resize of the uint8 RGB planes, clipped, then
// (x − 128)/128 (the network is the one checked against PyTorch for the
// other two modes), and they differ from the tf and pytorch-fid modes'
// by more than the network's round-off, so the mode reaches the network.
func TestCleanFeatures(t *testing.T) {
	m := randomModel(t)
	dir := shareddata.Path(t, fixtureDir)
	names, err := features.ListImages(filepath.Join(dir, "images"), false)
	if err != nil {
		t.Fatal(err)
	}
	names = names[5:7] // RGB 97×131 (upscaled), palette 512×384 (downscaled)
	var clean, direct, tf, pt [][]float32
	for _, n := range names {
		img, err := features.DecodeImage(dataio.HostFS, n)
		if err != nil {
			t.Fatal(err)
		}
		rgb := features.ToRGB(img)
		x := make([]float32, 3*Size*Size)
		p, err := resample.NewPlan(rgb.W, rgb.H, Size, Size, resample.Bicubic)
		if err != nil {
			t.Fatal(err)
		}
		src := make([]float32, len(rgb.Pix))
		for i, v := range rgb.Pix {
			src[i] = float32(v)
		}
		p.Float32(x, src)
		for i, v := range x {
			x[i] = (float32(math.Min(math.Max(float64(v), 0), 255)) - 128) / 128
		}
		direct = append(direct, x)
		for _, c := range []struct {
			mode Mode
			dst  *[][]float32
		}{{ModeClean, &clean}, {ModeTF, &tf}, {ModePyTorchFID, &pt}} {
			y, err := LoadImage(n, c.mode)
			if err != nil {
				t.Fatal(err)
			}
			*c.dst = append(*c.dst, y)
		}
	}
	run := func(b [][]float32) []Features {
		f, err := m.Forward(context.Background(), b, 0)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	fc, fd, ft, fp := run(clean), run(direct), run(tf), run(pt)
	for i := range names {
		var same, vsTF, vsPT float64
		for j := range fc[i].Pool2048 {
			same = math.Max(same, math.Abs(float64(fc[i].Pool2048[j]-fd[i].Pool2048[j])))
			vsTF = math.Max(vsTF, math.Abs(float64(fc[i].Pool2048[j]-ft[i].Pool2048[j])))
			vsPT = math.Max(vsPT, math.Abs(float64(fc[i].Pool2048[j]-fp[i].Pool2048[j])))
		}
		t.Logf("%s: pool2048 max |clean − tf| %.3g, |clean − pytorch-fid| %.3g", filepath.Base(names[i]), vsTF, vsPT)
		if same != 0 {
			t.Errorf("%s: clean features differ from the network on the clean input by %g", names[i], same)
		}
		if vsTF < 1e-4 || vsPT < 1e-4 {
			t.Errorf("%s: clean features within %g of tf's and %g of pytorch-fid's: the mode does not reach the network", names[i], vsTF, vsPT)
		}
	}
}
