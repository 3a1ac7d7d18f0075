package vit

import (
	"fmt"
	"io/fs"
	"math"
	"strings"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/resample"
	"github.com/genlens/genlens/network/features"
)

// Preset names a reference preprocessing pipeline: how an RGB image
// becomes the network's Input×Input float32 input.
type Preset string

// The presets. Each is the named tool's pipeline, step for step.
const (
	// PresetDGMEval is dgm-eval's DINOv2 transform (Stein et al.,
	// NeurIPS 2023): Pillow's bicubic resize of the 8-bit RGB image to
	// Input×Input (no crop, aspect ratio not kept), ToTensor (/255),
	// Normalize with ImageNet's mean and std.
	PresetDGMEval Preset = "dgm-eval"
	// PresetTorchFidelity is torch-fidelity's DINOv2 extractor: the uint8
	// values as float32, its TensorFlow-1.x-compatible bilinear resize to
	// Input×Input, then Normalize with 255·ImageNet mean and 255·std.
	PresetTorchFidelity Preset = "torch-fidelity"
	// PresetCLIP is CLIP's own transform, which clean-fid's CLIP-FID
	// uses: Pillow bicubic resize of the short side to Input (the long
	// side to int(Input·long/short)), centre crop Input×Input with
	// torchvision's offsets (Python round, half to even), /255,
	// Normalize with CLIP's mean and std.
	PresetCLIP Preset = "clip"
	// PresetCMMD is CMMD's pipeline (Jayasumana et al., CVPR 2024):
	// centre crop to the largest square (offsets floor((side − l)/2)),
	// Pillow bicubic resize to Input×Input, /255, CLIP's mean and std.
	PresetCMMD Preset = "cmmd"
)

var (
	imagenetMean = [3]float64{0.485, 0.456, 0.406}
	imagenetStd  = [3]float64{0.229, 0.224, 0.225}
	clipMean     = [3]float64{0.48145466, 0.4578275, 0.40821073}
	clipStd      = [3]float64{0.26862954, 0.26130258, 0.27577711}
)

// DefaultPreset is the preset of the tool each network's metric comes
// from: dgm-eval for DINOv2, clean-fid's CLIP transform for ViT-B/32
// (CLIP-FID), CMMD's for ViT-L/14 at 336.
func DefaultPreset(c Config) Preset {
	switch {
	case c.Family == DINOv2:
		return PresetDGMEval
	case c.Normalize:
		return PresetCMMD
	}
	return PresetCLIP
}

// ParsePreset checks a preset name for a network: the DINOv2 presets
// normalise with ImageNet's statistics, the CLIP ones with CLIP's, so
// each family takes its own two.
func ParsePreset(c Config, s string) (Preset, error) {
	p := Preset(strings.ToLower(strings.TrimSpace(s)))
	if s == "" {
		return DefaultPreset(c), nil
	}
	ok := map[Family][]Preset{DINOv2: {PresetDGMEval, PresetTorchFidelity}, CLIP: {PresetCLIP, PresetCMMD}}[c.Family]
	for _, q := range ok {
		if p == q {
			return p, nil
		}
	}
	return "", fmt.Errorf("unknown preset %q for %s (want %s or %s)", s, c.Name, ok[0], ok[1])
}

// Preprocess turns an RGB image into the 3×side×side input of preset p.
func Preprocess(img *features.RGB, p Preset, side int) ([]float32, error) {
	if img.H < 1 || img.W < 1 {
		return nil, fmt.Errorf("vit: empty %dx%d image", img.W, img.H)
	}
	switch p {
	case PresetDGMEval:
		px, err := resample.Uint8(img.Pix, img.W, img.H, side, side, resample.Bicubic)
		if err != nil {
			return nil, err
		}
		return toTensor(px, side, imagenetMean, imagenetStd), nil
	case PresetTorchFidelity:
		out := make([]float32, 3*side*side)
		plane := make([]float32, img.H*img.W)
		for c := 0; c < 3; c++ {
			for i, v := range img.Pix[c*img.H*img.W : (c+1)*img.H*img.W] {
				plane[i] = float32(v)
			}
			dst := out[c*side*side : (c+1)*side*side]
			resample.BilinearTF1(plane, img.H, img.W, dst, side, side)
			// torchvision's normalize with mean and std given as Python
			// floats 255·m and 255·s, stored as float32.
			m, s := float32(255*imagenetMean[c]), float32(255*imagenetStd[c])
			for i, v := range dst {
				dst[i] = (v - m) / s
			}
		}
		return out, nil
	case PresetCLIP:
		w, h := img.W, img.H
		ow, oh := side, side
		// torchvision's Resize(side) on a PIL image: the short side to
		// side, the long one to int(side·long/short).
		if w <= h {
			oh = int(float64(side*h) / float64(w))
		} else {
			ow = int(float64(side*w) / float64(h))
		}
		top := int(math.RoundToEven(float64(oh-side) / 2))
		left := int(math.RoundToEven(float64(ow-side) / 2))
		// Only the centre crop of the resize is made: the whole of it,
		// for an elongated image, is huge (a 1×20000 image resizes to
		// 224×4,480,000, 3 GB), and the crop of a window is the window.
		px, err := resample.Uint8Window(img.Pix, w, h, ow, oh, left, top, side, side, resample.Bicubic)
		if err != nil {
			return nil, err
		}
		return toTensor(px, side, clipMean, clipStd), nil
	case PresetCMMD:
		l := min(img.W, img.H)
		top, left := (img.H-l)/2, (img.W-l)/2
		sq := crop(img.Pix, img.W, img.H, left, top, l)
		px, err := resample.Uint8(sq, l, l, side, side, resample.Bicubic)
		if err != nil {
			return nil, err
		}
		return toTensor(px, side, clipMean, clipStd), nil
	}
	return nil, fmt.Errorf("vit: unknown preset %q", p)
}

// crop cuts the side×side square at (left, top) out of the three w×h
// planes of px.
func crop(px []uint8, w, h, left, top, side int) []uint8 {
	out := make([]uint8, 3*side*side)
	for c := 0; c < 3; c++ {
		for y := 0; y < side; y++ {
			src := px[c*w*h+(top+y)*w+left:]
			copy(out[(c*side+y)*side:(c*side+y+1)*side], src[:side])
		}
	}
	return out
}

// toTensor is ToTensor then Normalize in float32: (v/255 − mean)/std.
func toTensor(px []uint8, side int, mean, std [3]float64) []float32 {
	out := make([]float32, 3*side*side)
	for c := 0; c < 3; c++ {
		m, s := float32(mean[c]), float32(std[c])
		for i, v := range px[c*side*side : (c+1)*side*side] {
			out[c*side*side+i] = (float32(v)/255 - m) / s
		}
	}
	return out
}

// LoadImageFS decodes name in fsys (see features.DecodeImage: headers
// checked, PIL's convert("RGB")) and preprocesses it with preset p.
func LoadImageFS(fsys fs.FS, name string, p Preset, side int) ([]float32, error) {
	img, err := features.Decode(fsys, name)
	if err != nil {
		return nil, err
	}
	x, err := Preprocess(img, p, side)
	if err != nil {
		return nil, &fault.InputError{File: name, Msg: err.Error()}
	}
	return x, nil
}
