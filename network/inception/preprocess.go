package inception

import (
	"fmt"

	"github.com/genlens/genlens/internal/resample"
	"github.com/genlens/genlens/internal/suggest"
	"github.com/genlens/genlens/network/features"
)

// Mode selects the preprocessing pipeline.
type Mode string

const (
	// ModePyTorchFID is pytorch-fid's pipeline: RGB scaled to [0, 1],
	// torch's bilinear resize to 299×299 (align_corners=False, no
	// antialiasing), then 2x − 1.
	ModePyTorchFID Mode = "pytorch-fid"
	// ModeTF is torch-fidelity's pipeline: uint8 RGB values as floats,
	// the TensorFlow 1.x bilinear resize (no half-pixel centres), then
	// (x − 128)/128 — what the original TensorFlow FID code fed the graph.
	ModeTF Mode = "tf"
	// ModeClean is clean-fid's default pipeline (Parmar et al., "On
	// Aliased Resizing and Surprising Subtleties in GAN Evaluation", CVPR
	// 2022): each uint8 RGB channel as a float32 image resized to 299×299
	// exactly as Pillow's bicubic filter resizes mode F (antialiased when
	// downscaling; package resample), clipped to [0, 255], then
	// (x − 128)/128.
	ModeClean Mode = "clean"
)

// Modes lists the preprocessing modes, the default first.
var Modes = []Mode{ModePyTorchFID, ModeTF, ModeClean}

// ModeAliases are clean-fid's names of the same pipelines (its mode
// argument): legacy_pytorch is pytorch-fid's and legacy_tensorflow the
// TensorFlow FID code's, which torch-fidelity's (tf) reproduces; clean-fid
// documents both as equal to those tools (its docs/pytorch_fid.md and
// docs/tensorflow_fid.md), and its clean is ModeClean.
var ModeAliases = map[string]Mode{"legacy_pytorch": ModePyTorchFID, "legacy_tensorflow": ModeTF}

// ParseMode checks a mode name: one of Modes or ModeAliases, in any case
// and with dashes or underscores ("legacy-pytorch", "pytorch_fid").
func ParseMode(s string) (Mode, error) {
	f := suggest.Fold(s)
	for _, m := range Modes {
		if suggest.Fold(string(m)) == f {
			return m, nil
		}
	}
	for alias, m := range ModeAliases {
		if suggest.Fold(alias) == f {
			return m, nil
		}
	}
	return "", fmt.Errorf("unknown preprocessing mode %q (%s)", s, ModeWant(s))
}

// ModeWant says which modes there are, for the error of an unknown mode
// s, with the one s is two edits from when there is one: "did you mean
// clean? want pytorch-fid, tf or clean (...)".
func ModeWant(s string) string {
	want := "want pytorch-fid, tf or clean (clean-fid's legacy_pytorch is pytorch-fid, its legacy_tensorflow tf)"
	f := suggest.Fold(s)
	names := map[string]string{}
	var keys []string
	for _, m := range Modes {
		names[suggest.Fold(string(m))] = string(m)
		keys = append(keys, suggest.Fold(string(m)))
	}
	for _, alias := range []string{"legacy_pytorch", "legacy_tensorflow"} {
		names[suggest.Fold(alias)] = alias
		keys = append(keys, suggest.Fold(alias))
	}
	for _, k := range suggest.Among(f, keys) {
		if suggest.Distance(f, k) <= 2 {
			return fmt.Sprintf("did you mean %s? %s", names[k], want)
		}
	}
	return want
}

// Preprocess turns an RGB image into the 3×299×299 network input of the
// given mode.
func Preprocess(img *features.RGB, mode Mode) ([]float32, error) {
	if img.H < 1 || img.W < 1 {
		return nil, fmt.Errorf("inception: empty %dx%d image", img.W, img.H)
	}
	out := make([]float32, 3*Size*Size)
	if mode == ModeClean {
		return out, preprocessClean(img, out)
	}
	src := make([]float32, img.H*img.W)
	for c := 0; c < 3; c++ {
		plane := img.Pix[c*img.H*img.W : (c+1)*img.H*img.W]
		dst := out[c*Size*Size : (c+1)*Size*Size]
		switch mode {
		case ModePyTorchFID:
			for i, v := range plane {
				src[i] = float32(v) / 255
			}
			resizeTorch(src, img.H, img.W, dst, Size, Size)
			for i, v := range dst {
				dst[i] = 2*v - 1
			}
		case ModeTF:
			for i, v := range plane {
				src[i] = float32(v)
			}
			resample.BilinearTF1(src, img.H, img.W, dst, Size, Size)
			for i, v := range dst {
				dst[i] = (v - 128) / 128
			}
		default:
			return nil, fmt.Errorf("inception: unknown preprocessing mode %q", mode)
		}
	}
	return out, nil
}

// preprocessClean is clean-fid's "clean" pipeline into out (3×299×299):
// np.asarray of the RGB image, each channel as a float32 PIL image of
// mode F resized with Image.BICUBIC, clip(0, 255), then the network
// wrapper's x − 128 and / 128, each a float32 operation.
func preprocessClean(img *features.RGB, out []float32) error {
	p, err := resample.NewPlan(img.W, img.H, Size, Size, resample.Bicubic)
	if err != nil {
		return fmt.Errorf("inception: %dx%d image: %w", img.W, img.H, err)
	}
	src := make([]float32, len(img.Pix))
	for i, v := range img.Pix {
		src[i] = float32(v)
	}
	p.Float32(out, src)
	for i, v := range out {
		v = min(max(v, 0), 255)
		out[i] = (v - 128) / 128
	}
	return nil
}

// torchTaps returns, for each output index, the two source indices and
// their weights of torch's bilinear interpolation with
// align_corners=False and no antialiasing: source coordinate
// (i + 0.5)·in/out − 0.5, clamped at 0, in float32 as PyTorch computes it
// for float32 tensors.
func torchTaps(in, out int) (i0, i1 []int, l0, l1 []float32) {
	scale := float32(in) / float32(out)
	i0, i1 = make([]int, out), make([]int, out)
	l0, l1 = make([]float32, out), make([]float32, out)
	for i := 0; i < out; i++ {
		s := scale*(float32(i)+0.5) - 0.5
		if s < 0 {
			s = 0
		}
		a := int(s)
		b := a
		if a < in-1 {
			b = a + 1
		}
		w := s - float32(a)
		i0[i], i1[i], l0[i], l1[i] = a, b, 1-w, w
	}
	return
}

// resizeTorch is torch.nn.functional.interpolate(mode="bilinear",
// align_corners=False, antialias=False) on one plane.
func resizeTorch(src []float32, h, w int, dst []float32, oh, ow int) {
	if h == oh && w == ow {
		// Every tap is (i, i+1) with weights (1, 0) in float32, exactly:
		// the sum is the source value itself.
		copy(dst, src[:oh*ow])
		return
	}
	resizeTaps(src, h, w, dst, oh, ow)
}

// resizeTaps is resizeTorch through its taps, whatever the sizes.
func resizeTaps(src []float32, h, w int, dst []float32, oh, ow int) {
	y0, y1, ly0, ly1 := torchTaps(h, oh)
	x0, x1, lx0, lx1 := torchTaps(w, ow)
	for y := 0; y < oh; y++ {
		r0, r1 := src[y0[y]*w:], src[y1[y]*w:]
		for x := 0; x < ow; x++ {
			dst[y*ow+x] = ly0[y]*(lx0[x]*r0[x0[x]]+lx1[x]*r0[x1[x]]) +
				ly1[y]*(lx0[x]*r1[x0[x]]+lx1[x]*r1[x1[x]])
		}
	}
}
