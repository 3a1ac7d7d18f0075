package inception

import (
	"context"
	"fmt"
	"math"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/format/torchfile"
	"github.com/genlens/genlens/internal/tensor/linalg"
	"github.com/genlens/genlens/internal/tensor/par"
	"github.com/genlens/genlens/internal/tensor/simdblas"
)

// Size is the side of the square input the network takes.
const Size = 299

// Classes is the number of fc outputs of the FID network: the 2015
// TensorFlow graph kept 1008 classes (1000 ImageNet classes and 8 unused),
// and pytorch-fid ports it as is.
const Classes = 1008

// bnEps is the BatchNorm epsilon of torchvision's BasicConv2d.
const bnEps = 0.001

// conv is a BasicConv2d with its BatchNorm folded in: weights
// cout × (cin·kh·kw) in PyTorch's order, so that a row times an im2col
// column is one output pixel; bias from the BatchNorm shift.
type conv struct {
	cin, cout, kh, kw, stride, ph, pw int
	w, b                              []float32 // w is nil once packed or wg holds it
	// packed holds w packed for internal/simdblas when linalg.Sgemm would
	// use that kernel anyway (pure-Go build); nil with OpenBLAS.
	packed *simdblas.Packed
	// wg holds the Winograd form of a 3×3 stride-1 convolution that
	// takes it (pure-Go build), nil otherwise.
	wg *winograd
	// w1 holds the one-dimensional Winograd form of a 1×r or r×1
	// convolution that takes it (pure-Go build), nil otherwise.
	w1 *winograd1d
}

// convSpec lists one BasicConv2d of the network: its name in the state
// dict and the shape its weight must have.
type convSpec struct {
	name               string
	cin, cout, kh, kw  int
	stride, padH, padW int
}

// Model is the FID Inception-v3 with weights loaded and BatchNorm folded.
// It is safe for concurrent use: Forward allocates its own buffers.
type Model struct {
	convs map[string]*conv
	fcW   []float32 // Classes × 2048
	fcB   []float32
	// fused holds, per block, the 1×1 convolutions of pointwiseGroups
	// stacked into one (output channels concatenated in the group's
	// order), when the SGEMM kernel runs: the block's input is then packed
	// once for all of them, and their members keep no weights of their own.
	fused map[string]*conv
	// fcPacked is fcW packed for the SGEMM kernel, when one runs: the fc
	// layer is applied once per batch (Forward), so its 8 MB of weights
	// are read once for all the images rather than re-packed per image.
	fcPacked *simdblas.Packed
}

// specs returns every convolution of the FID network, with the stride and
// padding torchvision gives it (Szegedy et al., "Rethinking the Inception
// Architecture for Computer Vision", CVPR 2016, as ported by pytorch-fid).
func specs() []convSpec {
	var s []convSpec
	add := func(name string, cin, cout, kh, kw, stride int) {
		ph, pw := 0, 0
		if stride == 1 {
			ph, pw = (kh-1)/2, (kw-1)/2
		}
		s = append(s, convSpec{name, cin, cout, kh, kw, stride, ph, pw})
	}
	add("Conv2d_1a_3x3", 3, 32, 3, 3, 2)
	add("Conv2d_2a_3x3", 32, 32, 3, 3, 1)
	add("Conv2d_2b_3x3", 32, 64, 3, 3, 1)
	add("Conv2d_3b_1x1", 64, 80, 1, 1, 1)
	add("Conv2d_4a_3x3", 80, 192, 3, 3, 1)
	// The two unpadded stem convolutions shrink the map (299 → 147 → 71
	// with the strides and pools around them).
	for i := range s {
		if s[i].name == "Conv2d_2a_3x3" || s[i].name == "Conv2d_4a_3x3" {
			s[i].padH, s[i].padW = 0, 0
		}
	}
	blockA := func(p string, cin, poolFeatures int) {
		add(p+".branch1x1", cin, 64, 1, 1, 1)
		add(p+".branch5x5_1", cin, 48, 1, 1, 1)
		add(p+".branch5x5_2", 48, 64, 5, 5, 1)
		add(p+".branch3x3dbl_1", cin, 64, 1, 1, 1)
		add(p+".branch3x3dbl_2", 64, 96, 3, 3, 1)
		add(p+".branch3x3dbl_3", 96, 96, 3, 3, 1)
		add(p+".branch_pool", cin, poolFeatures, 1, 1, 1)
	}
	blockA("Mixed_5b", 192, 32)
	blockA("Mixed_5c", 256, 64)
	blockA("Mixed_5d", 288, 64)
	add("Mixed_6a.branch3x3", 288, 384, 3, 3, 2)
	add("Mixed_6a.branch3x3dbl_1", 288, 64, 1, 1, 1)
	add("Mixed_6a.branch3x3dbl_2", 64, 96, 3, 3, 1)
	add("Mixed_6a.branch3x3dbl_3", 96, 96, 3, 3, 2)
	blockC := func(p string, c7 int) {
		add(p+".branch1x1", 768, 192, 1, 1, 1)
		add(p+".branch7x7_1", 768, c7, 1, 1, 1)
		add(p+".branch7x7_2", c7, c7, 1, 7, 1)
		add(p+".branch7x7_3", c7, 192, 7, 1, 1)
		add(p+".branch7x7dbl_1", 768, c7, 1, 1, 1)
		add(p+".branch7x7dbl_2", c7, c7, 7, 1, 1)
		add(p+".branch7x7dbl_3", c7, c7, 1, 7, 1)
		add(p+".branch7x7dbl_4", c7, c7, 7, 1, 1)
		add(p+".branch7x7dbl_5", c7, 192, 1, 7, 1)
		add(p+".branch_pool", 768, 192, 1, 1, 1)
	}
	blockC("Mixed_6b", 128)
	blockC("Mixed_6c", 160)
	blockC("Mixed_6d", 160)
	blockC("Mixed_6e", 192)
	add("Mixed_7a.branch3x3_1", 768, 192, 1, 1, 1)
	add("Mixed_7a.branch3x3_2", 192, 320, 3, 3, 2)
	add("Mixed_7a.branch7x7x3_1", 768, 192, 1, 1, 1)
	add("Mixed_7a.branch7x7x3_2", 192, 192, 1, 7, 1)
	add("Mixed_7a.branch7x7x3_3", 192, 192, 7, 1, 1)
	add("Mixed_7a.branch7x7x3_4", 192, 192, 3, 3, 2)
	blockE := func(p string, cin int) {
		add(p+".branch1x1", cin, 320, 1, 1, 1)
		add(p+".branch3x3_1", cin, 384, 1, 1, 1)
		add(p+".branch3x3_2a", 384, 384, 1, 3, 1)
		add(p+".branch3x3_2b", 384, 384, 3, 1, 1)
		add(p+".branch3x3dbl_1", cin, 448, 1, 1, 1)
		add(p+".branch3x3dbl_2", 448, 384, 3, 3, 1)
		add(p+".branch3x3dbl_3a", 384, 384, 1, 3, 1)
		add(p+".branch3x3dbl_3b", 384, 384, 3, 1, 1)
		add(p+".branch_pool", cin, 192, 1, 1, 1)
	}
	blockE("Mixed_7b", 1280)
	blockE("Mixed_7c", 2048)
	return s
}

// NewModel builds the network from a state dict with pytorch-fid's key
// names (FIDInceptionA/C/E blocks, no auxiliary classifier). Keys it does
// not use are ignored; a missing key or a wrong shape is a one-line
// *fault.InputError naming the key, with file as the file name.
func NewModel(file string, sd map[string]*torchfile.Tensor) (*Model, error) {
	get := func(key string, shape ...int) (*torchfile.Tensor, error) {
		t, ok := sd[key]
		if !ok {
			return nil, &fault.InputError{File: file, Key: key, Msg: "missing from the state dict (not pytorch-fid's FID Inception weights?)"}
		}
		if !sameShape(t.Shape, shape) {
			return nil, &fault.InputError{File: file, Key: key, Msg: fmt.Sprintf("has shape %v, want %v", t.Shape, shape)}
		}
		// A NaN or infinite weight makes every feature NaN (or every
		// FID NaN) without an error anywhere downstream; and a float64
		// weight beyond float32's range becomes infinite when converted.
		for i, v := range t.Data {
			if math.IsNaN(v) || math.Abs(v) > math.MaxFloat32 {
				return nil, &fault.InputError{File: file, Key: key, Msg: fmt.Sprintf("element %d is %v; weights must be finite float32 values", i, v)}
			}
		}
		return t, nil
	}
	m := &Model{convs: map[string]*conv{}, fused: map[string]*conv{}}
	member := map[string]bool{}
	for _, g := range pointwiseGroups() {
		if !fusePointwise {
			break
		}
		for _, name := range g.members {
			member[name] = true
		}
	}
	for _, s := range specs() {
		w, err := get(s.name+".conv.weight", s.cout, s.cin, s.kh, s.kw)
		if err != nil {
			return nil, err
		}
		var bn [4]*torchfile.Tensor
		for i, part := range []string{"weight", "bias", "running_mean", "running_var"} {
			if bn[i], err = get(s.name+".bn."+part, s.cout); err != nil {
				return nil, err
			}
		}
		c := &conv{cin: s.cin, cout: s.cout, kh: s.kh, kw: s.kw, stride: s.stride, ph: s.padH, pw: s.padW,
			w: make([]float32, len(w.Data)), b: make([]float32, s.cout)}
		k := s.cin * s.kh * s.kw
		// Fold BatchNorm (inference mode) into the convolution, in float64
		// so the folded float32 weights are rounded once:
		// γ(Wx − μ)/√(σ²+ε) + β = (γ/√(σ²+ε))·Wx + (β − μγ/√(σ²+ε)).
		for o := 0; o < s.cout; o++ {
			scale := bn[0].Data[o] / math.Sqrt(bn[3].Data[o]+bnEps)
			if math.IsNaN(scale) || math.IsInf(scale, 0) {
				return nil, &fault.InputError{File: file, Key: s.name + ".bn.running_var", Msg: fmt.Sprintf("channel %d gives a non-finite BatchNorm scale", o)}
			}
			for j := 0; j < k; j++ {
				c.w[o*k+j] = float32(w.Data[o*k+j] * scale)
				if math.IsInf(float64(c.w[o*k+j]), 0) {
					return nil, &fault.InputError{File: file, Key: s.name + ".conv.weight", Msg: fmt.Sprintf("channel %d overflows float32 once BatchNorm is folded in", o)}
				}
			}
			c.b[o] = float32(bn[1].Data[o] - bn[2].Data[o]*scale)
			if math.IsInf(float64(c.b[o]), 0) {
				return nil, &fault.InputError{File: file, Key: s.name + ".bn.bias", Msg: fmt.Sprintf("channel %d overflows float32 once BatchNorm is folded in", o)}
			}
		}
		switch {
		case !linalg.SgemmKernel(), member[s.name]:
		case useWinograd(s):
			c.wg = newWinograd4(s.cout, s.cin, c.w)
		case useWinograd1D(s):
			c.w1 = newWinograd1D(s.cout, s.cin, max(s.kh, s.kw), s.kw == 1, winograd1dForms[max(s.kh, s.kw)], c.w)
		default:
			c.packed = simdblas.Pack(s.cout, k, c.w, k)
		}
		if c.packed != nil || c.wg != nil || c.w1 != nil {
			// The forward pass reads only the packed or transformed
			// copy: keeping w too would hold 90 MB more live heap, which
			// the garbage collector's headroom doubles in peak RSS.
			c.w = nil
		}
		m.convs[s.name] = c
	}
	if linalg.SgemmKernel() && fusePointwise {
		for _, g := range pointwiseGroups() {
			m.fused[g.block] = fuse(m.convs, g.members)
		}
	}
	fw, err := get("fc.weight", Classes, 2048)
	if err != nil {
		return nil, err
	}
	fb, err := get("fc.bias", Classes)
	if err != nil {
		return nil, err
	}
	m.fcW, m.fcB = toF32(fw.Data), toF32(fb.Data)
	if linalg.SgemmKernel() {
		m.fcPacked = simdblas.Pack(Classes, 2048, m.fcW, 2048)
	}
	return m, nil
}

// fusePointwise enables the stacked 1×1 convolutions of Model.fused; the
// tests clear it to compare the network with and without them.
var fusePointwise = true

// pointwiseGroup lists the 1×1 convolutions of one block that all read
// the block's input.
type pointwiseGroup struct {
	block   string
	members []string
}

// pointwiseGroups returns the groups of 1×1 convolutions that share an
// input, each block's first member being the one whose output goes
// straight into the block's output (channel 0), when it has one.
func pointwiseGroups() []pointwiseGroup {
	var g []pointwiseGroup
	for _, p := range []string{"Mixed_5b", "Mixed_5c", "Mixed_5d"} {
		g = append(g, pointwiseGroup{p, []string{p + ".branch1x1", p + ".branch5x5_1", p + ".branch3x3dbl_1"}})
	}
	for _, p := range []string{"Mixed_6b", "Mixed_6c", "Mixed_6d", "Mixed_6e"} {
		g = append(g, pointwiseGroup{p, []string{p + ".branch1x1", p + ".branch7x7_1", p + ".branch7x7dbl_1"}})
	}
	g = append(g, pointwiseGroup{"Mixed_7a", []string{"Mixed_7a.branch3x3_1", "Mixed_7a.branch7x7x3_1"}})
	for _, p := range []string{"Mixed_7b", "Mixed_7c"} {
		g = append(g, pointwiseGroup{p, []string{p + ".branch1x1", p + ".branch3x3_1", p + ".branch3x3dbl_1"}})
	}
	return g
}

// fuse stacks the folded weights of the named 1×1 convolutions (one
// input) into one packed convolution and drops theirs. Every output is
// the same sum in the same order as its own convolution's.
func fuse(convs map[string]*conv, names []string) *conv {
	f := &conv{cin: convs[names[0]].cin, kh: 1, kw: 1, stride: 1}
	var w []float32
	for _, name := range names {
		c := convs[name]
		f.cout += c.cout
		w = append(w, c.w...)
		f.b = append(f.b, c.b...)
		c.w = nil
	}
	f.packed = simdblas.Pack(f.cout, f.cin, w, f.cin)
	return f
}

// Load reads a .pth state dict (torchfile.LoadStateDict) and builds the
// model.
func Load(path string) (*Model, error) {
	sd, err := torchfile.LoadStateDict(path)
	if err != nil {
		return nil, err
	}
	return NewModel(path, sd)
}

func sameShape(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func toF32(x []float64) []float32 {
	y := make([]float32, len(x))
	for i, v := range x {
		y[i] = float32(v)
	}
	return y
}

// Features holds every output of the network for one image.
type Features struct {
	Pool64, Pool192, Pool768, Pool2048 []float32
	Logits, LogitsUnbiased             []float32
}

// Output names one of the outputs, as the --dims flag spells it.
type Output string

// The outputs: the first three are the feature maps after the first and
// second max pool and after Mixed_6e, average-pooled to one value per
// channel as pytorch-fid's get_activations does; 2048 is the final
// average pool FID uses; logits is fc and logits_unbiased fc without its
// bias (torch-fidelity's names).
const (
	Out64             Output = "64"
	Out192            Output = "192"
	Out768            Output = "768"
	Out2048           Output = "2048"
	OutLogits         Output = "logits"
	OutLogitsUnbiased Output = "logits_unbiased"
)

// Outputs lists the valid outputs in order.
var Outputs = []Output{Out64, Out192, Out768, Out2048, OutLogits, OutLogitsUnbiased}

// Dim returns the length of the output's vector, or 0 for an unknown name.
func (o Output) Dim() int {
	switch o {
	case Out64:
		return 64
	case Out192:
		return 192
	case Out768:
		return 768
	case Out2048:
		return 2048
	case OutLogits, OutLogitsUnbiased:
		return Classes
	}
	return 0
}

// Get returns the named output of f (nil for an unknown name).
func (f *Features) Get(o Output) []float32 {
	switch o {
	case Out64:
		return f.Pool64
	case Out192:
		return f.Pool192
	case Out768:
		return f.Pool768
	case Out2048:
		return f.Pool2048
	case OutLogits:
		return f.Logits
	case OutLogitsUnbiased:
		return f.LogitsUnbiased
	}
	return nil
}

// stage is how far into the network an output lies: the block whose
// end gives it (0 to 3), or stageFC for the logits. Unknown names need
// the whole pass.
func (o Output) stage() int {
	switch o {
	case Out64:
		return 0
	case Out192:
		return 1
	case Out768:
		return 2
	case Out2048:
		return 3
	}
	return stageFC
}

// stageFC is the stage of the logits, after the last block.
const stageFC = 4

// Forward runs the network on a batch of preprocessed images, each
// 3×299×299 channels first (see Preprocess), one image per goroutine on
// up to workers goroutines (<= 0: one per CPU), and returns every
// output. It stops at the next layer when ctx is cancelled.
func (m *Model) Forward(ctx context.Context, batch [][]float32, workers int) ([]Features, error) {
	return m.forwardTo(ctx, batch, workers, stageFC)
}

// ForwardTo is Forward run only as far as output last needs, as
// pytorch-fid's InceptionV3 stops after the block of its last requested
// output: Out64 runs the stem's first block alone, a twelfth of the
// pass's arithmetic. The outputs it reaches have the bits Forward gives
// them; those past last are nil.
func (m *Model) ForwardTo(ctx context.Context, batch [][]float32, workers int, last Output) ([]Features, error) {
	return m.forwardTo(ctx, batch, workers, last.stage())
}

func (m *Model) forwardTo(ctx context.Context, batch [][]float32, workers, stage int) ([]Features, error) {
	for i, x := range batch {
		if len(x) != 3*Size*Size {
			return nil, fmt.Errorf("inception: image %d has %d values, want 3×%d×%d", i, len(x), Size, Size)
		}
	}
	out := make([]Features, len(batch))
	err := par.For(ctx, len(batch), workers, func(ctx context.Context, i int) error {
		f, err := m.forward(ctx, batch[i], stage)
		if err != nil {
			return err
		}
		out[i] = f
		return nil
	})
	if err != nil {
		return nil, err
	}
	if m.fcPacked != nil && stage >= stageFC {
		m.fcBatch(out)
	}
	return out, nil
}
