package vit

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/internal/testkit/goldenbits"
)

// The fixtures in testdata were made by testdata/make_fixtures.py with
// PyTorch 1.13 running the reference modules on random weights.

func smallDINO(input int, swiglu bool) Config {
	c := Config{Name: "dinov2-small", Family: DINOv2, Patch: 14, Width: 32, Depth: 2, Heads: 2, Hidden: 128, Input: input}
	if swiglu {
		c.Width, c.SwiGLU, c.Hidden = 16, true, swigluHidden(16)
	}
	return c
}

func smallCLIP(normalize bool) Config {
	return Config{Name: "clip-small", Family: CLIP, Patch: 14, Width: 32, Depth: 2, Heads: 2, Hidden: 128, Input: 56, OutDim: 24, Normalize: normalize}
}

// fixtureInputs reads N×3×S×S uint8 images from an npz and normalises
// them as ToTensor and Normalize do, in float32.
func fixtureInputs(t *testing.T, npz, key string, mean, std [3]float64) [][]float32 {
	t.Helper()
	a, err := dataio.ReadArray(npz, dataio.ReadOptions{Key: key})
	if err != nil {
		t.Fatal(err)
	}
	n, s := a.Shape[0], a.Shape[2]
	out := make([][]float32, n)
	for i := range out {
		out[i] = make([]float32, 3*s*s)
		for c := 0; c < 3; c++ {
			for j := 0; j < s*s; j++ {
				v := float32(a.Data[(i*3+c)*s*s+j]) / 255
				out[i][c*s*s+j] = (v - float32(mean[c])) / float32(std[c])
			}
		}
	}
	return out
}

// compare checks got against the expected rows, relative to the largest
// expected value, and returns that relative error.
func compare(t *testing.T, got [][]float32, npz, key string, tol float64) float64 {
	t.Helper()
	want, err := dataio.ReadArray(npz, dataio.ReadOptions{Key: key})
	if err != nil {
		t.Fatal(err)
	}
	d := want.Shape[1]
	if len(got) != want.Shape[0] {
		t.Fatalf("%s: %d outputs, want %d", key, len(got), want.Shape[0])
	}
	var scale, worst float64
	for _, v := range want.Data {
		scale = math.Max(scale, math.Abs(v))
	}
	for i, row := range got {
		if len(row) != d {
			t.Fatalf("%s: output %d has %d values, want %d", key, i, len(row), d)
		}
		for j, v := range row {
			worst = math.Max(worst, math.Abs(float64(v)-want.Data[i*d+j]))
		}
	}
	if worst > tol*scale {
		t.Errorf("%s: max |Go − PyTorch| = %.3g, %.3g of the largest feature %.3g (tolerance %g)", key, worst, worst/scale, scale, tol)
	}
	return worst / scale
}

func TestFixtures(t *testing.T) {
	const tol = 1e-5 // float32 round-off, far below the 1e-4 the features must keep
	for _, tc := range []struct {
		name, weights, npz, inKey, outKey string
		cfg                               Config
		mean, std                         [3]float64
	}{
		{"dinov2 interpolated pos 7→4", "dinov2_small.pth", "dinov2_small.npz", "images_56", "out_56", smallDINO(56, false), imagenetMean, imagenetStd},
		{"dinov2 stored pos 7", "dinov2_small.pth", "dinov2_small.npz", "images_98", "out_98", smallDINO(98, false), imagenetMean, imagenetStd},
		{"dinov2 swiglu", "dinov2_swiglu.pth", "dinov2_swiglu.npz", "images_56", "out_56", smallDINO(56, true), imagenetMean, imagenetStd},
		{"clip pth", "clip_small.pth", "clip_small.npz", "images", "out", smallCLIP(false), clipMean, clipStd},
		{"clip pth normalised", "clip_small.pth", "clip_small.npz", "images", "out_normalized", smallCLIP(true), clipMean, clipStd},
		{"clip safetensors (HF names)", "clip_small.safetensors", "clip_small.npz", "images", "out", smallCLIP(false), clipMean, clipStd},
		{"clip torchscript float16 (OpenAI .pt)", "clip_torchscript.pt", "clip_torchscript.npz", "images", "out", smallCLIP(false), clipMean, clipStd},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Load(filepath.Join("testdata", tc.weights), tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			npz := filepath.Join("testdata", tc.npz)
			in := fixtureInputs(t, npz, tc.inKey, tc.mean, tc.std)
			got, err := m.Forward(context.Background(), in, 0)
			if err != nil {
				t.Fatal(err)
			}
			rel := compare(t, got, npz, tc.outKey, tol)
			t.Logf("relative error %.2g", rel)
		})
	}
}

// TestInterpolateReleased checks the positional-embedding resize at the
// released sizes, 37×37 to 16×16 with scale (16 + 0.1)/37, against
// torch.nn.functional.interpolate.
func TestInterpolateReleased(t *testing.T) {
	npz := filepath.Join("testdata", "interp.npz")
	src, err := dataio.ReadArray(npz, dataio.ReadOptions{Key: "src"})
	if err != nil {
		t.Fatal(err)
	}
	want, err := dataio.ReadArray(npz, dataio.ReadOptions{Key: "dst"})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(src.Shape) != "[37 37 3]" || fmt.Sprint(want.Shape) != "[16 16 3]" {
		t.Fatalf("shapes %v %v", src.Shape, want.Shape)
	}
	s := make([]float32, len(src.Data))
	for i, v := range src.Data {
		s[i] = float32(v)
	}
	pos := append(make([]float32, 3), s...) // a class position in front
	got := dinoPosEmbed(pos, 37, 16, 3)[3:]
	var worst, scale float64
	for i, v := range got {
		worst = math.Max(worst, math.Abs(float64(v)-want.Data[i]))
		scale = math.Max(scale, math.Abs(want.Data[i]))
	}
	// PyTorch's float32 kernel is itself about 1.4e-6 (relative) from
	// the exact resize, which these weights reproduce in float64 to
	// 1e-15.
	if worst > 5e-6*scale {
		t.Errorf("max |Go − torch| = %.3g of %.3g", worst, scale)
	}
	// Resizing to the output size 16 (scale 16/37) samples other
	// positions: the test must tell the two apart.
	alt := make([]float32, len(got))
	bicubicTokens(s, 37, 37, 3, alt, 16, 16, 16.0/37, 16.0/37)
	var diff float64
	for i, v := range alt {
		diff = math.Max(diff, math.Abs(float64(v)-want.Data[i]))
	}
	if diff < 1e-2 {
		t.Errorf("scale 16/37 differs from (16+0.1)/37 by only %.3g: the fixture does not pin the offset", diff)
	}
}

// TestArithmetic fails when the towers' output bits on the fixtures
// change while Arithmetic, which keys the feature cache, stays: raise it
// and record the bits with -update-bits.
func TestArithmetic(t *testing.T) {
	var rows [][]float32
	for _, tc := range []struct {
		weights, npz, key string
		cfg               Config
		mean, std         [3]float64
	}{
		{"dinov2_small.pth", "dinov2_small.npz", "images_56", smallDINO(56, false), imagenetMean, imagenetStd},
		{"dinov2_swiglu.pth", "dinov2_swiglu.npz", "images_56", smallDINO(56, true), imagenetMean, imagenetStd},
		{"clip_small.pth", "clip_small.npz", "images", smallCLIP(true), clipMean, clipStd},
	} {
		m, err := Load(filepath.Join("testdata", tc.weights), tc.cfg)
		if err != nil {
			t.Fatal(err)
		}
		out, err := m.Forward(context.Background(), fixtureInputs(t, filepath.Join("testdata", tc.npz), tc.key, tc.mean, tc.std), 0)
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, out...)
	}
	goldenbits.Check(t, filepath.Join("testdata", "arithmetic.golden"), Arithmetic, rows)
}
