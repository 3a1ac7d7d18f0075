package weights

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/genlens/genlens/internal/tensor/membudget"
)

// withBudget sets the matrix budget to n bytes for the test.
func withBudget(t *testing.T, n int64) {
	t.Helper()
	prev := membudget.SetLimit(n)
	t.Cleanup(func() { membudget.SetLimit(prev) })
}

func TestLoadViews(t *testing.T) {
	sd, err := Load(filepath.Join("testdata", "views.pth"))
	if err != nil {
		t.Fatal(err)
	}
	// The uint8 views are buffers, not weights: none is copied.
	if len(sd) != 8 {
		t.Fatalf("got %d tensors, want the 8 float ones", len(sd))
	}
	a, tr := sd["float.0"], sd["float.t"]
	for i := range 64 {
		for j := range 64 {
			if a.Data[i*64+j] != tr.Data[j*64+i] {
				t.Fatalf("float.t[%d,%d] = %v, want float.0[%d,%d] = %v", j, i, tr.Data[j*64+i], i, j, a.Data[i*64+j])
			}
		}
	}
	// torch.manual_seed(0); torch.randn(64, 64): x[0,0], x[1,0].
	if math.Abs(float64(a.Data[0])+1.1258) > 1e-4 || math.Abs(float64(a.Data[64])+0.5692) > 1e-4 {
		t.Errorf("float.0[0,0], [1,0] = %v, %v, want -1.1258, -0.5692", a.Data[0], a.Data[64])
	}
	only, err := LoadKeys(filepath.Join("testdata", "views.pth"), func(k string) bool { return k == "float.1" })
	if err != nil || len(only) != 1 || only["float.1"] == nil {
		t.Errorf("LoadKeys(float.1) = %d tensors, %v", len(only), err)
	}
}

// TestLoadPriced: the copies a file's views ask for are priced against
// the matrix budget before they are made, and the refusal names the file
// and the tensor (tensors that view one storage many times over made a
// small file cost tens of times its size). A float32 view in row-major
// order is its storage's memory, and costs nothing more.
func TestLoadPriced(t *testing.T) {
	path := filepath.Join("testdata", "views.pth")
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	// The file plus two of the four 4 KiB float32 copies of the float64
	// storage fit, the third does not.
	withBudget(t, st.Size()+2*32*32*4+100)
	_, err = Load(path)
	var be *membudget.Error
	if !errors.As(err, &be) || !strings.Contains(err.Error(), "views.pth") || !strings.Contains(err.Error(), "tensor double.2") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("err = %v, want a one-line budget error naming views.pth and double.2", err)
	}
	// The file and the transposed copy fit; the other float32 views are
	// the storage.
	withBudget(t, st.Size()+64*64*4)
	sd, err := LoadKeys(path, func(k string) bool { return strings.HasPrefix(k, "float.") })
	if err != nil {
		t.Fatalf("float32 views within the budget: %v", err)
	}
	if &sd["float.0"].Data[0] != &sd["float.1"].Data[0] || &sd["float.0"].Data[0] == &sd["float.t"].Data[0] {
		t.Error("float.0 and float.1 should share their storage, float.t be a copy")
	}

	// A safetensors file: 300 float32 take 1200 bytes.
	st300 := filepath.Join(t.TempDir(), "big.safetensors")
	if err := os.WriteFile(st300, stFile(`{"w":{"dtype":"F32","shape":[3,100],"data_offsets":[0,1200]}}`, make([]byte, 1200)), 0o644); err != nil {
		t.Fatal(err)
	}
	withBudget(t, 1000)
	_, err = Load(st300)
	if !errors.As(err, &be) || !strings.Contains(err.Error(), "big.safetensors up to tensor w") || !strings.Contains(err.Error(), "3 × 100") {
		t.Fatalf("err = %v, want a budget error naming big.safetensors and w", err)
	}
	withBudget(t, 2000)
	if sd, err := Load(st300); err != nil || len(sd["w"].Data) != 300 {
		t.Fatalf("within the budget: %v", err)
	}
}

// TestStoragesPriced: the storages a .pth holds are priced before they
// are read.
func TestStoragesPriced(t *testing.T) {
	withBudget(t, 4096)
	_, err := Load(filepath.Join("testdata", "views.pth"))
	var be *membudget.Error
	if !errors.As(err, &be) || !strings.Contains(err.Error(), "the storages of the weights") || !strings.Contains(err.Error(), "views.pth") {
		t.Fatalf("err = %v, want a budget error on the storages of views.pth", err)
	}
}

// FuzzLoad: whatever the file, Load returns tensors whose shapes hold
// their values, or an error; and it holds no more values than the file's
// storages allow (a few reads of each).
func FuzzLoad(f *testing.F) {
	for _, p := range []string{filepath.Join("testdata", "views.pth"), filepath.Join("..", "..", "..", "network", "deberta", "testdata", "tiny.safetensors")} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(t.TempDir(), "w")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		sd, err := Load(path)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("a message of several lines: %q", err)
			}
			return
		}
		total := 0
		for k, tt := range sd {
			n := 1
			for _, d := range tt.Shape {
				n *= d
			}
			if n != len(tt.Data) {
				t.Fatalf("%s: shape %v but %d values", k, tt.Shape, len(tt.Data))
			}
			total += n
		}
		if total > 4*len(b)+1024 {
			t.Fatalf("%d values from a %d-byte file", total, len(b))
		}
	})
}
