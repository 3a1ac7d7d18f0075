package vit

import (
	"fmt"
	"math"
	"strconv"
	"sync"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/format/weights"
	"github.com/genlens/genlens/network/internal/transformer"
)

// block is one transformer block.
type block struct {
	ln1, ln2   transformer.Norm
	qkv, proj  transformer.Linear
	ls1, ls2   []float32          // LayerScale gains; nil for CLIP
	fc1, fc2   transformer.Linear // fc1 is w12 and fc2 w3 for SwiGLU
	swigluHalf int                // hidden width of each SwiGLU half; 0 for an MLP
}

// Model is a ViT with weights loaded, at one input size. It is safe for
// concurrent use: every group of images Forward runs has its own buffers.
type Model struct {
	cfg    Config
	file   string             // the weights, named in errors
	patch  transformer.Linear // Width × 3·Patch², bias nil for CLIP
	cls    []float32          // class token (DINOv2) or class embedding (CLIP)
	pos    []float32          // Tokens × Width, already at the input grid
	posT   []float32          // pos transposed, Width × Tokens
	lnPre  *transformer.Norm  // CLIP's ln_pre
	blocks []block
	final  transformer.Norm // DINOv2's norm, CLIP's ln_post
	proj   []float32        // Width × OutDim (CLIP)
	bufs   sync.Pool        // *groupBufs
}

// Config returns the configuration the model was built with.
func (m *Model) Config() Config { return m.cfg }

// NewModel builds the network of cfg from a state dict with the
// reference's key names (see the package documentation); file names the
// source in errors. Keys it does not use are ignored; a missing key, a
// wrong shape, a NaN or ±Inf value or LayerNorm weights with which the
// norm could overflow float32 is a one-line *fault.InputError naming the
// key (transformer.Loader).
func NewModel(file string, cfg Config, sd map[string]*weights.Tensor) (*Model, error) {
	// The head count is the preset's: no tensor of the checkpoint shows
	// it (transformer.CheckHeads), so only that it splits the width is
	// checked, naming the weights it was to run.
	if err := transformer.CheckHeads(file, "heads", cfg.Width, cfg.Heads); err != nil {
		return nil, err
	}
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
	m.file = file
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
		b.qkv = b.qkv.Scaled(func(r int) float32 {
			if r < w {
				return scale
			}
			return 1
		})
		if b.ls1 != nil {
			b.proj = b.proj.Scaled(func(r int) float32 { return b.ls1[r] })
		}
		if b.ls2 != nil {
			b.fc2 = b.fc2.Scaled(func(r int) float32 { return b.ls2[r] })
		}
		b.qkv.Pack()
		b.proj.Pack()
		b.fc1.Pack()
		b.fc2.Pack()
	}
	m.patch.Pack()
	m.posT = make([]float32, w*T)
	for t := 0; t < T; t++ {
		for r := 0; r < w; r++ {
			m.posT[r*T+t] = m.pos[t*w+r]
		}
	}
}

func newDINOv2(file string, cfg Config, sd map[string]*weights.Tensor) (*Model, error) {
	l := &transformer.Loader{File: file, Tensors: sd, Hint: "not the weights of " + cfg.Name + "?"}
	w, p, eps := cfg.Width, cfg.Patch, cfg.Eps()
	m := &Model{cfg: cfg}
	var err error
	if _, ok := sd["register_tokens"]; ok {
		return nil, &fault.InputError{File: file, Key: "register_tokens", Msg: "DINOv2 with registers is not supported (want the plain " + cfg.Name + " weights)"}
	}
	// The stored convolution weight is W×3×p×p; as a matrix it is
	// W×(3·p·p) in the order a patch is laid out (channel, row, column).
	m.patch = transformer.Linear{In: 3 * p * p, Out: w}
	if m.patch.W, err = l.Tensor("patch_embed.proj.weight", w, 3, p, p); err != nil {
		return nil, err
	}
	if m.patch.B, err = l.Tensor("patch_embed.proj.bias", w); err != nil {
		return nil, err
	}
	if m.cls, err = l.Tensor("cls_token", 1, 1, w); err != nil {
		return nil, err
	}
	pe, err := l.Shape("pos_embed")
	if err != nil {
		return nil, err
	}
	if len(pe) != 3 || pe[0] != 1 || pe[2] != w {
		return nil, &fault.InputError{File: file, Key: "pos_embed", Msg: fmt.Sprintf("has shape %v, want [1 1+M² %d]", pe, w)}
	}
	n := pe[1] - 1
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
	posData, err := l.Tensor("pos_embed", 1, n+1, w)
	if err != nil {
		return nil, err
	}
	m.pos = dinoPosEmbed(posData, mg, cfg.Grid(), w)
	for i := 0; i < cfg.Depth; i++ {
		pre := "blocks." + strconv.Itoa(i) + "."
		var b block
		if b.ln1, err = l.Norm(pre+"norm1", w, eps); err != nil {
			return nil, err
		}
		if b.ln2, err = l.Norm(pre+"norm2", w, eps); err != nil {
			return nil, err
		}
		if b.qkv, err = l.Linear(pre+"attn.qkv", 3*w, w); err != nil {
			return nil, err
		}
		if b.proj, err = l.Linear(pre+"attn.proj", w, w); err != nil {
			return nil, err
		}
		if b.ls1, err = l.Tensor(pre+"ls1.gamma", w); err != nil {
			return nil, err
		}
		if b.ls2, err = l.Tensor(pre+"ls2.gamma", w); err != nil {
			return nil, err
		}
		if cfg.SwiGLU {
			b.swigluHalf = cfg.Hidden
			if b.fc1, err = l.Linear(pre+"mlp.w12", 2*cfg.Hidden, w); err != nil {
				return nil, err
			}
			if b.fc2, err = l.Linear(pre+"mlp.w3", w, cfg.Hidden); err != nil {
				return nil, err
			}
		} else {
			if b.fc1, err = l.Linear(pre+"mlp.fc1", cfg.Hidden, w); err != nil {
				return nil, err
			}
			if b.fc2, err = l.Linear(pre+"mlp.fc2", w, cfg.Hidden); err != nil {
				return nil, err
			}
		}
		m.blocks = append(m.blocks, b)
	}
	if m.final, err = l.Norm("norm", w, eps); err != nil {
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
	l := &transformer.Loader{File: file, Tensors: sd, Hint: "not OpenAI's " + cfg.Name + " weights?"}
	if _, ok := sd["visual.conv1.weight"]; ok {
		l.Prefix = "visual."
	}
	w, p, eps := cfg.Width, cfg.Patch, cfg.Eps()
	m := &Model{cfg: cfg}
	var err error
	m.patch = transformer.Linear{In: 3 * p * p, Out: w}
	if m.patch.W, err = l.Tensor("conv1.weight", w, 3, p, p); err != nil {
		return nil, err
	}
	if m.cls, err = l.Tensor("class_embedding", w); err != nil {
		return nil, err
	}
	if m.pos, err = l.Tensor("positional_embedding", cfg.Tokens(), w); err != nil {
		return nil, err
	}
	pre, err := l.Norm("ln_pre", w, eps)
	if err != nil {
		return nil, err
	}
	m.lnPre = &pre
	for i := 0; i < cfg.Depth; i++ {
		k := "transformer.resblocks." + strconv.Itoa(i) + "."
		var b block
		if b.ln1, err = l.Norm(k+"ln_1", w, eps); err != nil {
			return nil, err
		}
		if b.ln2, err = l.Norm(k+"ln_2", w, eps); err != nil {
			return nil, err
		}
		b.qkv = transformer.Linear{In: w, Out: 3 * w}
		if b.qkv.W, err = l.Tensor(k+"attn.in_proj_weight", 3*w, w); err != nil {
			return nil, err
		}
		if b.qkv.B, err = l.Tensor(k+"attn.in_proj_bias", 3*w); err != nil {
			return nil, err
		}
		if b.proj, err = l.Linear(k+"attn.out_proj", w, w); err != nil {
			return nil, err
		}
		if b.fc1, err = l.Linear(k+"mlp.c_fc", cfg.Hidden, w); err != nil {
			return nil, err
		}
		if b.fc2, err = l.Linear(k+"mlp.c_proj", w, cfg.Hidden); err != nil {
			return nil, err
		}
		m.blocks = append(m.blocks, b)
	}
	if m.final, err = l.Norm("ln_post", w, eps); err != nil {
		return nil, err
	}
	if m.proj, err = l.Tensor("proj", w, cfg.OutDim); err != nil {
		return nil, err
	}
	return m, nil
}
