package torchfile

import (
	"archive/zip"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/testkit/shareddata"
)

// fixtureDir holds small state dicts saved by torch in both formats,
// beside the random-weight Inception fixture.
const fixtureDir = "fixtures/inception_random"

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
				if !slices.Equal(got.Shape, w.Shape) || got.DType != w.DType {
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
// file and the problem, as a *fault.InputError.
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
			var ie *fault.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("got %v (%T), want *fault.InputError", err, err)
			}
			if msg := err.Error(); !strings.Contains(msg, tc.want) || strings.Contains(msg, "\n") {
				t.Errorf("error %q: want one line containing %q", msg, tc.want)
			}
		})
	}
}
