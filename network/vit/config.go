package vit

import (
	"fmt"
	"sort"
	"strings"
)

// Family is the architecture family of a network.
type Family string

// The two families.
const (
	DINOv2 Family = "dinov2"
	CLIP   Family = "clip"
)

// Config describes one network: its shape, the input side it runs at and
// what it outputs. The variants Configs lists are the released networks;
// tests build smaller ones.
type Config struct {
	Name   string
	Family Family
	Patch  int // patch side in pixels
	Width  int // token width
	Depth  int // transformer blocks
	Heads  int // attention heads (Width/Heads per head)
	Hidden int // FFN hidden width (for SwiGLU the width of each half)
	SwiGLU bool
	// Input is the side of the square image the network runs at; the
	// positional embedding is resized to Input/Patch when it was trained
	// on another grid (DINOv2 only: CLIP's must match).
	Input int
	// OutDim is the width of CLIP's projection (0 for DINOv2, whose
	// output is the Width-wide class token).
	OutDim int
	// Normalize L2-normalises the output (CMMD's CLIP features).
	Normalize bool
}

// Eps is the LayerNorm epsilon of the family: DINOv2 builds its norms
// with eps 1e-6, CLIP keeps nn.LayerNorm's default 1e-5.
func (c Config) Eps() float32 {
	if c.Family == DINOv2 {
		return 1e-6
	}
	return 1e-5
}

// Dim is the length of the output vector.
func (c Config) Dim() int {
	if c.OutDim > 0 {
		return c.OutDim
	}
	return c.Width
}

// Grid is the side of the patch grid at the input size.
func (c Config) Grid() int { return c.Input / c.Patch }

// Tokens is the sequence length: the class token and one per patch.
func (c Config) Tokens() int { return 1 + c.Grid()*c.Grid() }

// MACs is the number of multiply-adds of one image, for throughput
// estimates: the linear layers, the patch embedding and attention.
func (c Config) MACs() float64 {
	t, w := float64(c.Tokens()), float64(c.Width)
	ffn := 2 * w * float64(c.Hidden)
	if c.SwiGLU {
		ffn = 3 * w * float64(c.Hidden)
	}
	perBlock := t*(4*w*w+ffn) + 2*t*t*w
	patch := float64(c.Grid()*c.Grid()) * 3 * float64(c.Patch*c.Patch) * w
	return float64(c.Depth)*perBlock + patch + w*float64(c.OutDim)
}

func (c Config) validate() error {
	switch {
	case c.Family != DINOv2 && c.Family != CLIP:
		return fmt.Errorf("vit: unknown family %q", c.Family)
	case c.Patch < 1 || c.Width < 1 || c.Depth < 1 || c.Heads < 1 || c.Hidden < 1:
		return fmt.Errorf("vit: %s: patch, width, depth, heads and hidden must be positive", c.Name)
	case c.Width%c.Heads != 0:
		return fmt.Errorf("vit: %s: width %d is not a multiple of %d heads", c.Name, c.Width, c.Heads)
	case c.Input < c.Patch:
		return fmt.Errorf("vit: %s: input %d is smaller than a patch (%d)", c.Name, c.Input, c.Patch)
	case c.SwiGLU && c.Family != DINOv2:
		return fmt.Errorf("vit: %s: SwiGLU is a DINOv2 option", c.Name)
	}
	return nil
}

// swigluHidden is the hidden width DINOv2's SwiGLUFFNFused derives from
// mlp_ratio·width: two thirds, rounded up to a multiple of 8.
func swigluHidden(width int) int { return (4*width*2/3 + 7) / 8 * 8 }

// Configs holds the released networks by embedder name. DINOv2 runs at
// 224 px (the input of dgm-eval and torch-fidelity), CLIP at the
// resolution it was trained at.
var Configs = map[string]Config{
	"dinov2-vits14": {Name: "dinov2-vits14", Family: DINOv2, Patch: 14, Width: 384, Depth: 12, Heads: 6, Hidden: 1536, Input: 224},
	"dinov2-vitb14": {Name: "dinov2-vitb14", Family: DINOv2, Patch: 14, Width: 768, Depth: 12, Heads: 12, Hidden: 3072, Input: 224},
	"dinov2-vitl14": {Name: "dinov2-vitl14", Family: DINOv2, Patch: 14, Width: 1024, Depth: 24, Heads: 16, Hidden: 4096, Input: 224},
	"dinov2-vitg14": {Name: "dinov2-vitg14", Family: DINOv2, Patch: 14, Width: 1536, Depth: 40, Heads: 24, Hidden: swigluHidden(1536), SwiGLU: true, Input: 224},
	// clean-fid's CLIP-FID: encode_image, not normalised.
	"clip-vitb32": {Name: "clip-vitb32", Family: CLIP, Patch: 32, Width: 768, Depth: 12, Heads: 12, Hidden: 3072, Input: 224, OutDim: 512},
	// CMMD: the L2-normalised projection of ViT-L/14 at 336 px.
	"clip-vitl14-336": {Name: "clip-vitl14-336", Family: CLIP, Patch: 14, Width: 1024, Depth: 24, Heads: 16, Hidden: 4096, Input: 336, OutDim: 768, Normalize: true},
}

// Names lists the embedder names of Configs, sorted.
func Names() []string {
	n := make([]string, 0, len(Configs))
	for k := range Configs {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

// Lookup returns the configuration of a released network by name.
func Lookup(name string) (Config, error) {
	c, ok := Configs[name]
	if !ok {
		return Config{}, fmt.Errorf("unknown embedder %q (want one of %s)", name, strings.Join(Names(), ", "))
	}
	return c, nil
}
