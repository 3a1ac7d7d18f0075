package inception

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/internal/tensor/linalg"
	"github.com/genlens/genlens/internal/testkit/goldenbits"
	"github.com/genlens/genlens/internal/testkit/shareddata"
	"github.com/genlens/genlens/metric/frechet"
	"github.com/genlens/genlens/network/features"

	"gonum.org/v1/gonum/mat"
)

const fixtureDir = "fixtures/inception_random"

var (
	fixtureOnce  sync.Once
	fixtureModel *Model
	fixtureErr   error
)

// randomModel loads the random-weight network once per test binary: the
// 95 MB state dict takes a few seconds to unpickle.
func randomModel(tb testing.TB) *Model {
	tb.Helper()
	p := shareddata.Path(tb, filepath.Join(fixtureDir, "inception_random.pth"))
	fixtureOnce.Do(func() { fixtureModel, fixtureErr = Load(p) })
	if fixtureErr != nil {
		tb.Fatal(fixtureErr)
	}
	return fixtureModel
}

func TestFixtureFeatures(t *testing.T) {
	m := randomModel(t)
	dir := shareddata.Path(t, fixtureDir)
	names, err := features.ListImages(filepath.Join(dir, "images"), false)
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != 16 {
		t.Fatalf("%d images, want 16", len(names))
	}
	npz := filepath.Join(dir, "expected.npz")
	for _, tc := range []struct {
		mode   Mode
		prefix string
	}{{ModePyTorchFID, ""}, {ModeTF, "tf_"}} {
		batch := make([][]float32, len(names))
		for i, n := range names {
			if batch[i], err = LoadImage(n, tc.mode); err != nil {
				t.Fatal(err)
			}
		}
		feats, err := m.Forward(context.Background(), batch, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range Outputs {
			key := tc.prefix + map[Output]string{Out64: "pool64", Out192: "pool192", Out768: "pool768", Out2048: "pool2048", OutLogits: "logits", OutLogitsUnbiased: "logits_unbiased"}[o]
			want, err := dataio.ReadArray(npz, dataio.ReadOptions{Key: key})
			if err != nil {
				t.Fatal(err)
			}
			d := o.Dim()
			if len(want.Data) != len(names)*d {
				t.Fatalf("%s: expected shape %v, want (16, %d)", key, want.Shape, d)
			}
			var worst float64
			for i := range names {
				got := feats[i].Get(o)
				for j := 0; j < d; j++ {
					worst = math.Max(worst, math.Abs(float64(got[j])-want.Data[i*d+j]))
				}
			}
			t.Logf("%-20s max abs diff %.3g", key, worst)
			if worst > 1e-4 {
				t.Errorf("%s: max abs diff %.3g > 1e-4", key, worst)
			}
		}
		if tc.mode == ModePyTorchFID {
			checkFID(t, dir, feats)
		}
	}
}

// checkFID compares the Fréchet distance (Heusel et al., NeurIPS 2017)
// between the first and last 8 images with pytorch-fid's figure.
func checkFID(t *testing.T, dir string, feats []Features) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var exp struct {
		FID float64 `json:"fid_first_half_vs_second_half"`
	}
	if err := json.Unmarshal(raw, &exp); err != nil {
		t.Fatal(err)
	}
	half := func(lo int) *mat.Dense {
		x := mat.NewDense(8, 2048, nil)
		for i := 0; i < 8; i++ {
			for j, v := range feats[lo+i].Pool2048 {
				x.Set(i, j, float64(v))
			}
		}
		return x
	}
	// ddof 1: pytorch-fid's np.cov.
	got, err := frechet.Distance(frechet.StatsOf(half(0), 1), frechet.StatsOf(half(8), 1))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("FID first 8 vs last 8: %.6f (pytorch-fid %.6f)", got, exp.FID)
	if math.Abs(got-exp.FID) > 1e-4*exp.FID {
		t.Errorf("FID %.8g, want %.8g within 1e-4 relative", got, exp.FID)
	}
}

// TestFusedPointwise runs the network with the 1×1 convolutions that
// share an input stacked into one product and with each on its own: the
// features must be the same bits (each output is the same sum in the
// same order), which also checks that every branch reads its own rows of
// the stacked output.
func TestFusedPointwise(t *testing.T) {
	if !linalg.SgemmKernel() {
		t.Skip("the 1×1 convolutions are stacked only with the pure-Go SGEMM kernel")
	}
	p := shareddata.Path(t, filepath.Join(fixtureDir, "inception_random.pth"))
	names, err := features.ListImages(filepath.Join(shareddata.Path(t, fixtureDir), "images"), false)
	if err != nil {
		t.Fatal(err)
	}
	batch := make([][]float32, 2)
	for i := range batch {
		if batch[i], err = LoadImage(names[i+3], ModePyTorchFID); err != nil {
			t.Fatal(err)
		}
	}
	var runs [2][]Features
	for i, fused := range []bool{true, false} {
		fusePointwise = fused
		m, err := Load(p)
		fusePointwise = true
		if err != nil {
			t.Fatal(err)
		}
		if got := len(m.fused) > 0; got != fused {
			t.Fatalf("fused=%v: model has %d stacked groups", fused, len(m.fused))
		}
		if runs[i], err = m.Forward(context.Background(), batch, 1); err != nil {
			t.Fatal(err)
		}
	}
	for j := range batch {
		for _, o := range Outputs {
			a, b := runs[0][j].Get(o), runs[1][j].Get(o)
			for k := range a {
				if math.Float32bits(a[k]) != math.Float32bits(b[k]) {
					t.Fatalf("image %d, output %s[%d]: %v stacked, %v on its own", j, o, k, a[k], b[k])
				}
			}
		}
	}
}

// TestArithmetic fails when the network's output bits on the fixture
// change while Arithmetic, which keys the feature cache, stays: raise
// it and record the bits with -update-bits.
func TestArithmetic(t *testing.T) {
	m := randomModel(t)
	names, err := features.ListImages(filepath.Join(shareddata.Path(t, fixtureDir), "images"), false)
	if err != nil {
		t.Fatal(err)
	}
	var rows [][]float32
	for _, mode := range []Mode{ModePyTorchFID, ModeTF} {
		batch := make([][]float32, 2)
		for i := range batch {
			if batch[i], err = LoadImage(names[i], mode); err != nil {
				t.Fatal(err)
			}
		}
		fs, err := m.Forward(context.Background(), batch, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range fs {
			rows = append(rows, f.Pool64, f.Pool192, f.Pool768, f.Pool2048, f.Logits, f.LogitsUnbiased)
		}
	}
	goldenbits.Check(t, filepath.Join("testdata", "arithmetic.golden"), Arithmetic, rows)
}
