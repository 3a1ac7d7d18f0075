package vit

import (
	"fmt"
	"math"
	"strconv"
	"sync"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/format/weights"
	"github.com/genlens/genlens/internal/tensor/linalg"
	"github.com/genlens/genlens/internal/tensor/simdblas"
)

// linear is y = W·x + b with W out×in in PyTorch's nn.Linear layout; b is
// nil for a layer without bias. Once the model is prepared, pw holds W
// packed for simdblas.MulAddPacked (and w is dropped) where the SGEMM
// kernel runs.
type linear struct {
	in, out int
	w, b    []float32
	pw      *simdblas.Packed
}

// norm is a LayerNorm's gain and shift.
type norm struct{ g, b []float32 }

// block is one transformer block.
type block struct {
	ln1, ln2   norm
	qkv, proj  linear
	ls1, ls2   []float32 // LayerScale gains; nil for CLIP
	fc1, fc2   linear    // fc1 is w12 and fc2 w3 for SwiGLU
	swigluHalf int       // hidden width of each SwiGLU half; 0 for an MLP
}

// Model is a ViT with weights loaded, at one input size. It is safe for
// concurrent use: every group of images Forward runs has its own buffers.
type Model struct {
	cfg    Config
	patch  linear    // Width × 3·Patch², bias nil for CLIP
	cls    []float32 // class token (DINOv2) or class embedding (CLIP)
	pos    []float32 // Tokens × Width, already at the input grid
	posT   []float32 // pos transposed, Width × Tokens
	lnPre  *norm     // CLIP's ln_pre
	blocks []block
	final  norm      // DINOv2's norm, CLIP's ln_post
	proj   []float32 // Width × OutDim (CLIP)
	bufs   sync.Pool // *groupBufs
}

// Config returns the configuration the model was built with.
func (m *Model) Config() Config { return m.cfg }

// loader fetches tensors by key and checks their shapes, naming the file
// and key in its errors.
type loader struct {
	file   string
	sd     map[string]*weights.Tensor
	prefix string
	hint   string
}

func (l *loader) get(key string, shape ...int) ([]float32, error) {
	k := l.prefix + key
	t, ok := l.sd[k]
	if !ok {
		return nil, &fault.InputError{File: l.file, Key: k, Msg: "missing from the state dict (" + l.hint + ")"}
	}
	if !sameShape(t.Shape, shape) {
		return nil, &fault.InputError{File: l.file, Key: k, Msg: fmt.Sprintf("has shape %v, want %v (%s)", t.Shape, shape, l.hint)}
	}
	for i, v := range t.Data {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return nil, &fault.InputError{File: l.file, Key: k, Msg: fmt.Sprintf("element %d is %v", i, v)}
		}
	}
	return t.Data, nil
}

func (l *loader) lin(key string, out, in int, bias bool) (linear, error) {
	w, err := l.get(key+".weight", out, in)
	if err != nil {
		return linear{}, err
	}
	li := linear{in: in, out: out, w: w}
	if bias {
		if li.b, err = l.get(key+".bias", out); err != nil {
			return linear{}, err
		}
	}
	return li, nil
}

func (l *loader) norm(key string, w int) (norm, error) {
	g, err := l.get(key+".weight", w)
	if err != nil {
		return norm{}, err
	}
	b, err := l.get(key+".bias", w)
	return norm{g, b}, err
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

// NewModel builds the network of cfg from a state dict with the
// reference's key names (see the package documentation); file names the
// source in errors. Keys it does not use are ignored; a missing key or a
// wrong shape is a one-line *fault.InputError naming the key.
func NewModel(file string, cfg Config, sd map[string]*weights.Tensor) (*Model, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	var m *Model
	var err error
	if cfg.Family == DINOv2 {
		m, err = newDINOv2(file, cfg, sd)
	} else {
		m, err = newCLIP(file, cfg, sd)
	}
	if err != nil {
		return nil, err
	}
	m.prepare()
	return m, nil
}

// prepare turns the weights as loaded into those the forward pass
// multiplies by, on copies (the state dict is the caller's): the query
// rows of every qkv layer times the attention scale 1/√(Width/Heads)
// (exact for the power-of-two scale of 64-wide heads), LayerScale folded
// into the layers before it, x + γ⊙(Wh + b) = x + (γ⊙W)h + γ⊙b, so that
// their products add straight onto the residual, every weight packed,
// and the positional embedding transposed to the token-column layout.
func (m *Model) prepare() {
	c := m.cfg
	w, T := c.Width, c.Tokens()
	scale := float32(1 / math.Sqrt(float64(w/c.Heads)))
	for i := range m.blocks {
		b := &m.blocks[i]
		b.qkv = b.qkv.scaled(func(r int) float32 {
			if r < w {
				return scale
			}
			return 1
		})
		if b.ls1 != nil {
			b.proj = b.proj.scaled(func(r int) float32 { return b.ls1[r] })
		}
		if b.ls2 != nil {
			b.fc2 = b.fc2.scaled(func(r int) float32 { return b.ls2[r] })
		}
		b.qkv.pack()
		b.proj.pack()
		b.fc1.pack()
		b.fc2.pack()
	}
	m.patch.pack()
	m.posT = make([]float32, w*T)
	for t := 0; t < T; t++ {
		for r := 0; r < w; r++ {
			m.posT[r*T+t] = m.pos[t*w+r]
		}
	}
}

// scaled returns a copy of l with row r of W and of b times f(r).
func (l linear) scaled(f func(r int) float32) linear {
	s := linear{in: l.in, out: l.out, w: make([]float32, len(l.w))}
	for r := 0; r < l.out; r++ {
		g := f(r)
		for j, v := range l.w[r*l.in : (r+1)*l.in] {
			s.w[r*l.in+j] = v * g
		}
	}
	if l.b != nil {
		s.b = make([]float32, len(l.b))
		for r, v := range l.b {
			s.b[r] = v * f(r)
		}
	}
	return s
}

// pack packs W for MulAddPacked when the SGEMM kernel runs.
func (l *linear) pack() {
	if linalg.SgemmKernel() {
		l.pw = simdblas.Pack(l.out, l.in, l.w, l.in)
		l.w = nil
	}
}

// mulAdd adds W·X to C for the n columns of X (leading dimension ldx)
// and of C (ldc).
func (l *linear) mulAdd(n int, x []float32, ldx int, c []float32, ldc int) {
	if l.pw != nil {
		simdblas.MulAddPacked(l.pw, n, x, ldx, c, ldc)
		return
	}
	linalg.Sgemm(false, false, l.out, n, l.in, 1, l.w, l.in, x, ldx, 1, c, ldc)
}

func newDINOv2(file string, cfg Config, sd map[string]*weights.Tensor) (*Model, error) {
	l := &loader{file: file, sd: sd, hint: "not the weights of " + cfg.Name + "?"}
	w, p := cfg.Width, cfg.Patch
	m := &Model{cfg: cfg}
	var err error
	if _, ok := sd["register_tokens"]; ok {
		return nil, &fault.InputError{File: file, Key: "register_tokens", Msg: "DINOv2 with registers is not supported (want the plain " + cfg.Name + " weights)"}
	}
	// The stored convolution weight is W×3×p×p; as a matrix it is
	// W×(3·p·p) in the order a patch is laid out (channel, row, column).
	m.patch = linear{in: 3 * p * p, out: w}
	if m.patch.w, err = l.get("patch_embed.proj.weight", w, 3, p, p); err != nil {
		return nil, err
	}
	if m.patch.b, err = l.get("patch_embed.proj.bias", w); err != nil {
		return nil, err
	}
	if m.cls, err = l.get("cls_token", 1, 1, w); err != nil {
		return nil, err
	}
	pe, ok := sd["pos_embed"]
	if !ok {
		return nil, &fault.InputError{File: file, Key: "pos_embed", Msg: "missing from the state dict (" + l.hint + ")"}
	}
	if len(pe.Shape) != 3 || pe.Shape[0] != 1 || pe.Shape[2] != w {
		return nil, &fault.InputError{File: file, Key: "pos_embed", Msg: fmt.Sprintf("has shape %v, want [1 1+M² %d]", pe.Shape, w)}
	}
	n := pe.Shape[1] - 1
	mg := int(math.Sqrt(float64(n)))
	for mg*mg > n {
		mg--
	}
	for (mg+1)*(mg+1) <= n {
		mg++
	}
	if n < 1 || mg*mg != n {
		return nil, &fault.InputError{File: file, Key: "pos_embed", Msg: fmt.Sprintf("has %d patch positions, not a square grid", n)}
	}
	posData, err := l.get("pos_embed", 1, n+1, w)
	if err != nil {
		return nil, err
	}
	m.pos = dinoPosEmbed(posData, mg, cfg.Grid(), w)
	for i := 0; i < cfg.Depth; i++ {
		pre := "blocks." + strconv.Itoa(i) + "."
		var b block
		if b.ln1, err = l.norm(pre+"norm1", w); err != nil {
			return nil, err
		}
		if b.ln2, err = l.norm(pre+"norm2", w); err != nil {
			return nil, err
		}
		if b.qkv, err = l.lin(pre+"attn.qkv", 3*w, w, true); err != nil {
			return nil, err
		}
		if b.proj, err = l.lin(pre+"attn.proj", w, w, true); err != nil {
			return nil, err
		}
		if b.ls1, err = l.get(pre+"ls1.gamma", w); err != nil {
			return nil, err
		}
		if b.ls2, err = l.get(pre+"ls2.gamma", w); err != nil {
			return nil, err
		}
		if cfg.SwiGLU {
			b.swigluHalf = cfg.Hidden
			if b.fc1, err = l.lin(pre+"mlp.w12", 2*cfg.Hidden, w, true); err != nil {
				return nil, err
			}
			if b.fc2, err = l.lin(pre+"mlp.w3", w, cfg.Hidden, true); err != nil {
				return nil, err
			}
		} else {
			if b.fc1, err = l.lin(pre+"mlp.fc1", cfg.Hidden, w, true); err != nil {
				return nil, err
			}
			if b.fc2, err = l.lin(pre+"mlp.fc2", w, cfg.Hidden, true); err != nil {
				return nil, err
			}
		}
		m.blocks = append(m.blocks, b)
	}
	if m.final, err = l.norm("norm", w); err != nil {
		return nil, err
	}
	return m, nil
}

// dinoPosEmbed returns the positional embedding at grid g from the one
// stored at grid mg (1+mg² rows of width w): the class position as is,
// the patch positions resized as interpolate_pos_encoding does. The
// reference keeps the stored embedding when the grids agree.
func dinoPosEmbed(pos []float32, mg, g, w int) []float32 {
	if g == mg {
		return append([]float32(nil), pos...)
	}
	out := make([]float32, (1+g*g)*w)
	copy(out, pos[:w])
	// scale_factor = (g + 0.1)/M, as a Python float; the offset keeps
	// floor(M·scale) at g despite rounding (facebookresearch/dino#8).
	scale := (float64(g) + 0.1) / float64(mg)
	bicubicTokens(pos[w:], mg, mg, w, out[w:], g, g, scale, scale)
	return out
}

func newCLIP(file string, cfg Config, sd map[string]*weights.Tensor) (*Model, error) {
	l := &loader{file: file, sd: sd, hint: "not OpenAI's " + cfg.Name + " weights?"}
	if _, ok := sd["visual.conv1.weight"]; ok {
		l.prefix = "visual."
	}
	w, p := cfg.Width, cfg.Patch
	m := &Model{cfg: cfg}
	var err error
	m.patch = linear{in: 3 * p * p, out: w}
	if m.patch.w, err = l.get("conv1.weight", w, 3, p, p); err != nil {
		return nil, err
	}
	if m.cls, err = l.get("class_embedding", w); err != nil {
		return nil, err
	}
	if m.pos, err = l.get("positional_embedding", cfg.Tokens(), w); err != nil {
		return nil, err
	}
	pre, err := l.norm("ln_pre", w)
	if err != nil {
		return nil, err
	}
	m.lnPre = &pre
	for i := 0; i < cfg.Depth; i++ {
		k := "transformer.resblocks." + strconv.Itoa(i) + "."
		var b block
		if b.ln1, err = l.norm(k+"ln_1", w); err != nil {
			return nil, err
		}
		if b.ln2, err = l.norm(k+"ln_2", w); err != nil {
			return nil, err
		}
		b.qkv = linear{in: w, out: 3 * w}
		if b.qkv.w, err = l.get(k+"attn.in_proj_weight", 3*w, w); err != nil {
			return nil, err
		}
		if b.qkv.b, err = l.get(k+"attn.in_proj_bias", 3*w); err != nil {
			return nil, err
		}
		if b.proj, err = l.lin(k+"attn.out_proj", w, w, true); err != nil {
			return nil, err
		}
		if b.fc1, err = l.lin(k+"mlp.c_fc", cfg.Hidden, w, true); err != nil {
			return nil, err
		}
		if b.fc2, err = l.lin(k+"mlp.c_proj", w, cfg.Hidden, true); err != nil {
			return nil, err
		}
		m.blocks = append(m.blocks, b)
	}
	if m.final, err = l.norm("ln_post", w); err != nil {
		return nil, err
	}
	if m.proj, err = l.get("proj", w, cfg.OutDim); err != nil {
		return nil, err
	}
	return m, nil
}
