package vit

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/format/weights"
)

// LoadWeights reads a state dict from a .pth file (torch.save, legacy or
// zip serialisation), a TorchScript archive (OpenAI's CLIP .pt; its
// parameters) or a safetensors file as float32 tensors (weights.Load,
// priced against the matrix budget). Hugging Face's CLIP names are
// mapped to OpenAI's (see hfToOpenAI).
func LoadWeights(path string) (map[string]*weights.Tensor, error) {
	sd, err := weights.Load(path)
	if err != nil {
		return nil, err
	}
	if _, ok := sd[hfVision+"embeddings.patch_embedding.weight"]; ok {
		return hfToOpenAI(path, sd)
	}
	return sd, nil
}

// ReadSafetensors reads the floating-point tensors of a safetensors file
// as float32 (weights.ReadSafetensors).
func ReadSafetensors(path string) (map[string]*weights.Tensor, error) {
	return weights.ReadSafetensors(path)
}

// Load reads weights and builds the network of cfg.
func Load(path string, cfg Config) (*Model, error) {
	sd, err := LoadWeights(path)
	if err != nil {
		return nil, err
	}
	return NewModel(path, cfg, sd)
}

const hfVision = "vision_model."

// hfToOpenAI renames the vision tower of a Hugging Face CLIPModel (or
// CLIPVisionModelWithProjection) to OpenAI's state-dict names: the
// separate q, k and v projections become in_proj_weight/bias (their rows
// stacked in that order, as nn.MultiheadAttention keeps them), and
// visual_projection.weight, an out×width nn.Linear weight, becomes proj,
// the width×out matrix encode_image multiplies by on the right.
func hfToOpenAI(path string, hf map[string]*weights.Tensor) (map[string]*weights.Tensor, error) {
	sd := map[string]*weights.Tensor{}
	move := func(from, to string) error {
		t, ok := hf[from]
		if !ok {
			return &fault.InputError{File: path, Key: from, Msg: "missing from the Hugging Face CLIP weights"}
		}
		sd[to] = t
		return nil
	}
	pairs := [][2]string{
		{"embeddings.class_embedding", "class_embedding"},
		{"embeddings.patch_embedding.weight", "conv1.weight"},
		{"embeddings.position_embedding.weight", "positional_embedding"},
		{"pre_layrnorm.weight", "ln_pre.weight"}, {"pre_layrnorm.bias", "ln_pre.bias"},
		{"post_layernorm.weight", "ln_post.weight"}, {"post_layernorm.bias", "ln_post.bias"},
	}
	for _, p := range pairs {
		if err := move(hfVision+p[0], "visual."+p[1]); err != nil {
			return nil, err
		}
	}
	for i := 0; ; i++ {
		h := hfVision + "encoder.layers." + strconv.Itoa(i) + "."
		if _, ok := hf[h+"layer_norm1.weight"]; !ok {
			break
		}
		o := "visual.transformer.resblocks." + strconv.Itoa(i) + "."
		for _, p := range [][2]string{
			{"layer_norm1", "ln_1"}, {"layer_norm2", "ln_2"}, {"mlp.fc1", "mlp.c_fc"}, {"mlp.fc2", "mlp.c_proj"}, {"self_attn.out_proj", "attn.out_proj"},
		} {
			for _, s := range []string{".weight", ".bias"} {
				if err := move(h+p[0]+s, o+p[1]+s); err != nil {
					return nil, err
				}
			}
		}
		for _, s := range []string{"weight", "bias"} {
			var parts []*weights.Tensor
			for _, qkv := range []string{"q", "k", "v"} {
				k := h + "self_attn." + qkv + "_proj." + s
				t, ok := hf[k]
				if !ok {
					return nil, &fault.InputError{File: path, Key: k, Msg: "missing from the Hugging Face CLIP weights"}
				}
				if len(parts) > 0 && !slices.Equal(t.Shape, parts[0].Shape) {
					return nil, &fault.InputError{File: path, Key: k, Msg: fmt.Sprintf("has shape %v, unlike the q projection's %v", t.Shape, parts[0].Shape)}
				}
				parts = append(parts, t)
			}
			cat := &weights.Tensor{Shape: append([]int{3 * parts[0].Shape[0]}, parts[0].Shape[1:]...)}
			for _, t := range parts {
				cat.Data = append(cat.Data, t.Data...)
			}
			sd[o+"attn.in_proj_"+s] = cat
		}
	}
	vp, ok := hf["visual_projection.weight"]
	if !ok {
		return nil, &fault.InputError{File: path, Key: "visual_projection.weight", Msg: "missing (want the weights of CLIPModel or CLIPVisionModelWithProjection, which include the projection)"}
	}
	if len(vp.Shape) != 2 {
		return nil, &fault.InputError{File: path, Key: "visual_projection.weight", Msg: fmt.Sprintf("has shape %v, want 2-D", vp.Shape)}
	}
	out, w := vp.Shape[0], vp.Shape[1]
	proj := &weights.Tensor{Shape: []int{w, out}, Data: make([]float32, w*out)}
	for i := 0; i < out; i++ {
		for j := 0; j < w; j++ {
			proj.Data[j*out+i] = vp.Data[i*w+j]
		}
	}
	sd["visual.proj"] = proj
	return sd, nil
}
