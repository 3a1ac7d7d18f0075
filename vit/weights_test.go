package vit

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/genlens/genlens/dataio"
)

// stFile builds a safetensors file from a header and data.
func stFile(header string, data []byte) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.LittleEndian, uint64(len(header)))
	b.WriteString(header)
	b.Write(data)
	return b.Bytes()
}

func f32bytes(v ...float32) []byte {
	var b bytes.Buffer
	for _, x := range v {
		binary.Write(&b, binary.LittleEndian, math.Float32bits(x))
	}
	return b.Bytes()
}

func TestSafetensors(t *testing.T) {
	good := stFile(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"h":{"dtype":"F16","shape":[2],"data_offsets":[8,12]},"b":{"dtype":"BF16","shape":[1],"data_offsets":[12,14]},"i":{"dtype":"I64","shape":[1],"data_offsets":[14,22]},"__metadata__":{"format":"pt"}}`,
		append(append(f32bytes(1.5, -2), 0x00, 0x3c, 0x01, 0x80, 0xc0, 0x3f), make([]byte, 8)...))
	sd, err := parseSafetensors("g.safetensors", bytes.NewReader(good), int64(len(good)))
	if err != nil {
		t.Fatal(err)
	}
	if got := sd["a"].Data; len(got) != 2 || got[0] != 1.5 || got[1] != -2 {
		t.Errorf("a = %v", got)
	}
	// F16 0x3c00 = 1, 0x8001 = −2⁻²⁴ (the smallest subnormal); BF16
	// 0x3fc0 = 1.5.
	if got := sd["h"].Data; got[0] != 1 || got[1] != -float32(math.Ldexp(1, -24)) {
		t.Errorf("h = %v", got)
	}
	if got := sd["b"].Data; got[0] != 1.5 {
		t.Errorf("b = %v", got)
	}
	if _, ok := sd["i"]; ok {
		t.Error("integer tensor kept")
	}
	for _, tc := range []struct {
		name string
		file []byte
		want string
	}{
		{"short", []byte{1, 2, 3}, "shorter than the 8-byte header length"},
		{"header past end", stFile(`{}`, nil)[:9], "header claims 2 bytes"},
		{"huge header", append([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}, '{', '}'), "header claims"},
		{"not json", stFile(`{"a":`, nil), "not a JSON object"},
		{"truncated data", good[:len(good)-3], "outside the 19 data bytes"},
		{"size mismatch", stFile(`{"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}`, make([]byte, 8)), "needs 12 bytes, offsets give 8"},
		{"overflow", stFile(`{"a":{"dtype":"F32","shape":[4611686018427387904,4],"data_offsets":[0,8]}}`, make([]byte, 8)), "overflows"},
		{"negative", stFile(`{"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,0]}}`, nil), "negative dimension"},
		{"dtype", stFile(`{"a":{"dtype":"F128","shape":[1],"data_offsets":[0,16]}}`, make([]byte, 16)), `unknown dtype "F128"`},
		{"overlap", stFile(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}}`, make([]byte, 12)), `overlap those of "a" [0, 8]`},
		{"reversed offsets", stFile(`{"a":{"dtype":"F32","shape":[0],"data_offsets":[8,0]}}`, make([]byte, 8)), "outside"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseSafetensors("x.safetensors", bytes.NewReader(tc.file), int64(len(tc.file)))
			var ie *dataio.InputError
			if !errors.As(err, &ie) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "x.safetensors") {
				t.Errorf("err = %v, want an InputError naming the file and containing %q", err, tc.want)
			}
		})
	}
}

func FuzzSafetensors(f *testing.F) {
	fixture, err := os.ReadFile(filepath.Join("testdata", "clip_small.safetensors"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(fixture[:4096])
	f.Add(stFile(`{"a":{"dtype":"F16","shape":[2,1],"data_offsets":[0,4]}}`, make([]byte, 4)))
	f.Add(stFile(`{"a":{"dtype":"F32","shape":[],"data_offsets":[0,4]},"__metadata__":{}}`, make([]byte, 4)))
	f.Fuzz(func(t *testing.T, b []byte) {
		sd, err := parseSafetensors("f", bytes.NewReader(b), int64(len(b)))
		if err != nil {
			return
		}
		total := 0
		for k, tt := range sd {
			total += len(tt.Data)
			n := 1
			for _, d := range tt.Shape {
				n *= d
			}
			if n != len(tt.Data) {
				t.Fatalf("%s: shape %v but %d values", k, tt.Shape, len(tt.Data))
			}
		}
		if total > len(b) {
			t.Fatalf("%d values from a %d-byte file", total, len(b))
		}
	})
}

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
