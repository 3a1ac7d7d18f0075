package inception

import (
	"archive/zip"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"genlens/dataio"
	"genlens/internal/shareddata"
)

// TestLoadStateDictFixtures reads the same seven tensors saved in both
// serialisations: float16/32/64, an int64 scalar, a view with a storage
// offset and a transposed (non-contiguous) tensor.
func TestLoadStateDictFixtures(t *testing.T) {
	raw, err := os.ReadFile(shareddata.Path(t, filepath.Join(fixtureDir, "small_expected.json")))
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]struct {
		Shape  []int     `json:"shape"`
		DType  string    `json:"dtype"`
		Values []float64 `json:"values_row_major"`
	}
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	for _, file := range []string{"small_legacy.pth", "small_zip.pth"} {
		t.Run(file, func(t *testing.T) {
			sd, err := LoadStateDict(shareddata.Path(t, filepath.Join(fixtureDir, file)))
			if err != nil {
				t.Fatal(err)
			}
			if len(sd) != len(want) {
				t.Errorf("%d tensors, want %d", len(sd), len(want))
			}
			for key, w := range want {
				got, ok := sd[key]
				if !ok {
					t.Errorf("%s missing", key)
					continue
				}
				if !sameShape(got.Shape, w.Shape) || got.DType != w.DType {
					t.Errorf("%s: shape %v %s, want %v %s", key, got.Shape, got.DType, w.Shape, w.DType)
					continue
				}
				for i, v := range w.Values {
					if got.Data[i] != v {
						t.Errorf("%s[%d] = %g, want %g", key, i, got.Data[i], v)
					}
				}
			}
		})
	}
}

// TestLoadStateDictErrors: every broken file gives one line naming the
// file and the problem, as a *dataio.InputError.
func TestLoadStateDictErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	read := func(rel string) []byte {
		b, err := os.ReadFile(shareddata.Path(t, filepath.Join(fixtureDir, rel)))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	legacy, zipped := read("small_legacy.pth"), read("small_zip.pth")

	// A TorchScript archive: torch.jit.save writes code/ and constants.pkl.
	ts := filepath.Join(dir, "script.pt")
	f, err := os.Create(ts)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	for _, n := range []string{"model/data.pkl", "model/code/__torch__.py", "model/constants.pkl"} {
		w, _ := zw.Create(n)
		w.Write([]byte("x"))
	}
	zw.Close()
	f.Close()

	for _, tc := range []struct {
		name, path, want string
	}{
		{"missing", filepath.Join(dir, "nope.pth"), "cannot read weights"},
		{"empty", write("empty.pth", nil), "not a PyTorch .pth file"},
		{"text", write("text.pth", []byte("hello, world\n")), "not a PyTorch .pth file"},
		{"legacy truncated", write("legacy_cut.pth", legacy[:len(legacy)*2/3]), "legacy_cut.pth"},
		{"legacy last bytes cut", write("legacy_end.pth", legacy[:len(legacy)-3]), "truncated PyTorch file"},
		{"legacy header only", write("legacy_head.pth", legacy[:40]), "legacy_head.pth"},
		{"zip truncated", write("zip_cut.pth", zipped[:len(zipped)/2]), "truncated or corrupt PyTorch zip"},
		{"torchscript", ts, "TorchScript"},
		{"folder", dir, "not a regular file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadStateDict(tc.path)
			var ie *dataio.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("got %v (%T), want *dataio.InputError", err, err)
			}
			if msg := err.Error(); !strings.Contains(msg, tc.want) || strings.Contains(msg, "\n") {
				t.Errorf("error %q: want one line containing %q", msg, tc.want)
			}
		})
	}
}

// TestNewModelErrors: a state dict that is not the FID network names the
// first missing key or the key with the wrong shape.
func TestNewModelErrors(t *testing.T) {
	full := zeroStateDict()
	if _, err := NewModel("w.pth", full); err != nil {
		t.Fatalf("complete state dict: %v", err)
	}
	for _, tc := range []struct {
		name string
		edit func(sd map[string]*Tensor)
		want string
	}{
		{"missing", func(sd map[string]*Tensor) { delete(sd, "Mixed_6c.branch7x7dbl_3.bn.running_var") }, `"Mixed_6c.branch7x7dbl_3.bn.running_var": missing`},
		{"shape", func(sd map[string]*Tensor) {
			sd["Mixed_7b.branch3x3_2a.conv.weight"] = &Tensor{Shape: []int{384, 384, 3, 1}, Data: make([]float64, 384*384*3)}
		}, `"Mixed_7b.branch3x3_2a.conv.weight": has shape [384 384 3 1], want [384 384 1 3]`},
		{"fc classes", func(sd map[string]*Tensor) {
			sd["fc.bias"] = &Tensor{Shape: []int{1000}, Data: make([]float64, 1000)}
		}, `"fc.bias": has shape [1000], want [1008]`},
		{"negative variance", func(sd map[string]*Tensor) {
			sd["Conv2d_1a_3x3.bn.running_var"] = &Tensor{Shape: []int{32}, Data: make([]float64, 32)}
			sd["Conv2d_1a_3x3.bn.running_var"].Data[3] = -1
		}, "channel 3 gives a non-finite BatchNorm scale"},
		// Non-finite weights would give NaN features and exit 0.
		{"NaN weight", func(sd map[string]*Tensor) {
			sd["fc.weight"] = withValue(sd["fc.weight"], 5000, math.NaN())
		}, `"fc.weight": element 5000 is NaN`},
		{"infinite weight", func(sd map[string]*Tensor) {
			sd["Mixed_5b.branch1x1.conv.weight"] = withValue(sd["Mixed_5b.branch1x1.conv.weight"], 7, math.Inf(-1))
		}, `"Mixed_5b.branch1x1.conv.weight": element 7 is -Inf`},
		{"NaN running mean", func(sd map[string]*Tensor) {
			sd["Conv2d_2a_3x3.bn.running_mean"] = withValue(sd["Conv2d_2a_3x3.bn.running_mean"], 0, math.NaN())
		}, `"Conv2d_2a_3x3.bn.running_mean": element 0 is NaN`},
		{"beyond float32", func(sd map[string]*Tensor) {
			sd["fc.bias"] = withValue(sd["fc.bias"], 2, 1e39)
		}, `"fc.bias": element 2 is 1e+39`},
		{"overflow once folded", func(sd map[string]*Tensor) {
			sd["Conv2d_1a_3x3.conv.weight"] = withValue(sd["Conv2d_1a_3x3.conv.weight"], 27, 3e38)
			sd["Conv2d_1a_3x3.bn.weight"] = withValue(sd["Conv2d_1a_3x3.bn.weight"], 1, 10)
		}, `"Conv2d_1a_3x3.conv.weight": channel 1 overflows float32`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sd := make(map[string]*Tensor, len(full))
			for k, v := range full {
				sd[k] = v
			}
			tc.edit(sd)
			_, err := NewModel("w.pth", sd)
			var ie *dataio.InputError
			if !errors.As(err, &ie) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an InputError containing %q", err, tc.want)
			}
		})
	}
}

// withValue returns a copy of t with element i set to v.
func withValue(t *Tensor, i int, v float64) *Tensor {
	c := &Tensor{Shape: t.Shape, DType: t.DType, Data: append([]float64(nil), t.Data...)}
	c.Data[i] = v
	return c
}

func onesF64(n int) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = 1
	}
	return x
}
