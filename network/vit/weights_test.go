package vit

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	sd, err := LoadWeights(filepath.Join("testdata", "dinov2_small.pth"))
	if err != nil {
		t.Fatal(err)
	}
	// A network of another width: the first tensor checked names its
	// key and both shapes.
	_, err = NewModel("w.pth", Config{Name: "x", Family: DINOv2, Patch: 14, Width: 64, Depth: 2, Heads: 2, Hidden: 256, Input: 56}, sd)
	if err == nil || !strings.Contains(err.Error(), "w.pth") || !strings.Contains(err.Error(), "patch_embed.proj.weight") || !strings.Contains(err.Error(), "want [64 3 14 14]") {
		t.Errorf("wrong width: %v", err)
	}
	// More blocks than the file has.
	_, err = NewModel("w.pth", Config{Name: "x", Family: DINOv2, Patch: 14, Width: 32, Depth: 3, Heads: 2, Hidden: 128, Input: 56}, sd)
	if err == nil || !strings.Contains(err.Error(), "blocks.2.norm1.weight") || !strings.Contains(err.Error(), "missing") {
		t.Errorf("extra block: %v", err)
	}
	// DINOv2 weights given to CLIP.
	_, err = NewModel("w.pth", smallCLIP(false), sd)
	if err == nil || !strings.Contains(err.Error(), "conv1.weight") {
		t.Errorf("wrong family: %v", err)
	}
	// A NaN weight.
	sd["norm.bias"].Data[3] = float32(math.NaN())
	_, err = NewModel("w.pth", smallDINO(56, false), sd)
	if err == nil || !strings.Contains(err.Error(), "norm.bias") || !strings.Contains(err.Error(), "NaN") {
		t.Errorf("NaN: %v", err)
	}
	// Not a weights file at all, and a truncated safetensors file.
	junk := filepath.Join(dir, "junk.bin")
	os.WriteFile(junk, []byte("hello world"), 0o644)
	if _, err := LoadWeights(junk); err == nil || !strings.Contains(err.Error(), "junk.bin") {
		t.Errorf("junk: %v", err)
	}
	st, _ := os.ReadFile(filepath.Join("testdata", "clip_small.safetensors"))
	cut := filepath.Join(dir, "cut.safetensors")
	os.WriteFile(cut, st[:len(st)-100], 0o644)
	if _, err := LoadWeights(cut); err == nil || !strings.Contains(err.Error(), "cut.safetensors") || !strings.Contains(err.Error(), "truncated") {
		t.Errorf("cut: %v", err)
	}
	// A Hugging Face file without the projection.
	hf, err := ReadSafetensors(filepath.Join("testdata", "clip_small.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	delete(hf, "visual_projection.weight")
	if _, err := hfToOpenAI("hf.safetensors", hf); err == nil || !strings.Contains(err.Error(), "visual_projection.weight") {
		t.Errorf("no projection: %v", err)
	}
}

func TestConfigs(t *testing.T) {
	for name, c := range Configs {
		if err := c.validate(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if c.Name != name {
			t.Errorf("%s: name %q", name, c.Name)
		}
	}
	// ViT-g/14's SwiGLU hidden width, as SwiGLUFFNFused computes it.
	if h := Configs["dinov2-vitg14"].Hidden; h != 4096 {
		t.Errorf("vitg14 hidden %d, want 4096", h)
	}
	// The sizes the papers and references quote: 257 tokens for DINOv2
	// at 224, 50 for CLIP B/32, 577 for L/14 at 336; ViT-L/14 about 80
	// G multiply-adds an image at 224.
	for name, tok := range map[string]int{"dinov2-vitl14": 257, "clip-vitb32": 50, "clip-vitl14-336": 577} {
		if got := Configs[name].Tokens(); got != tok {
			t.Errorf("%s: %d tokens, want %d", name, got, tok)
		}
	}
	if g := Configs["dinov2-vitl14"].MACs() / 1e9; g < 77 || g > 83 {
		t.Errorf("ViT-L/14 %.1f GMAC, want about 80", g)
	}
	if _, err := Lookup("dinov2-vitx14"); err == nil || !strings.Contains(err.Error(), "dinov2-vitl14") {
		t.Errorf("Lookup: %v", err)
	}
}

func TestTorchScriptErrors(t *testing.T) {
	dir := t.TempDir()
	b, err := os.ReadFile(filepath.Join("testdata", "clip_torchscript.pt"))
	if err != nil {
		t.Fatal(err)
	}
	// Cut inside the zip: not readable as an archive any more.
	cut := filepath.Join(dir, "cut.pt")
	os.WriteFile(cut, b[:len(b)/2], 0o644)
	if _, err := LoadWeights(cut); err == nil || !strings.Contains(err.Error(), "cut.pt") {
		t.Errorf("cut archive: %v", err)
	}
	// A plain state dict is not a TorchScript archive.
	if _, err := ReadTorchScript(filepath.Join("testdata", "clip_small.pth")); err == nil || !strings.Contains(err.Error(), "not a TorchScript archive") {
		t.Errorf("state dict: %v", err)
	}
	// The archive's tensors carry the state-dict names of the module.
	sd, err := ReadTorchScript(filepath.Join("testdata", "clip_torchscript.pt"))
	if err != nil {
		t.Fatal(err)
	}
	if w := sd["visual.transformer.resblocks.1.attn.in_proj_weight"]; w == nil || fmt.Sprint(w.Shape) != "[96 32]" {
		t.Errorf("in_proj_weight: %+v", w)
	}
}
