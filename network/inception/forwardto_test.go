package inception

import (
	"context"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/genlens/genlens/internal/format/torchfile"
	"github.com/genlens/genlens/internal/testkit/shareddata"
	"github.com/genlens/genlens/network/features"
)

// TestForwardToBits wants the outputs of the pass stopped early
// (ForwardTo, and the Embedder that uses it) bit-identical to those of
// the whole pass, and the outputs past the stop nil, on the fixture's
// random weights and images and on a model of other random weights fed
// random inputs.
func TestForwardToBits(t *testing.T) {
	t.Run("fixture", func(t *testing.T) {
		m := randomModel(t)
		names, err := features.ListImages(filepath.Join(shareddata.Path(t, fixtureDir), "images"), false)
		if err != nil {
			t.Fatal(err)
		}
		batch := make([][]float32, 3)
		for i := range batch {
			if batch[i], err = LoadImage(names[i], ModePyTorchFID); err != nil {
				t.Fatal(err)
			}
		}
		checkForwardTo(t, m, batch)
	})
	t.Run("in-test", func(t *testing.T) {
		rng := rand.New(rand.NewPCG(11, 12))
		m, err := NewModel("random", randomStateDict(rng))
		if err != nil {
			t.Fatal(err)
		}
		batch := make([][]float32, 2)
		for i := range batch {
			batch[i] = make([]float32, 3*Size*Size)
			for j := range batch[i] {
				batch[i][j] = 2*rng.Float32() - 1
			}
		}
		checkForwardTo(t, m, batch)
	})
}

func checkForwardTo(t *testing.T, m *Model, batch [][]float32) {
	t.Helper()
	ctx := context.Background()
	full, err := m.Forward(ctx, batch, 0)
	if err != nil {
		t.Fatal(err)
	}
	// A model whose features are all zero would pass for any stop.
	for _, o := range Outputs {
		if allZero(full[0].Get(o)) {
			t.Fatalf("output %s of the whole pass is all zeros", o)
		}
	}
	for _, last := range Outputs {
		part, err := m.ForwardTo(ctx, batch, 0, last)
		if err != nil {
			t.Fatal(err)
		}
		e := NewEmbedder(ModePyTorchFID, last, "", 0, func() (*Model, error) { return m, nil })
		rows, err := e.Forward(ctx, batch)
		if err != nil {
			t.Fatal(err)
		}
		for i := range batch {
			sameBits(t, "embedder "+string(last), rows[i], full[i].Get(last))
			for _, o := range Outputs {
				got, want := part[i].Get(o), full[i].Get(o)
				if o.stage() > last.stage() {
					if got != nil {
						t.Errorf("ForwardTo(%s): image %d has output %s, want nil", last, i, o)
					}
					continue
				}
				sameBits(t, "ForwardTo("+string(last)+") output "+string(o), got, want)
			}
		}
	}
}

func sameBits(t *testing.T, what string, got, want []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for k := range got {
		if math.Float32bits(got[k]) != math.Float32bits(want[k]) {
			t.Fatalf("%s[%d] = %v, want %v as the whole pass gives", what, k, got[k], want[k])
		}
	}
}

func allZero(v []float32) bool {
	for _, x := range v {
		if x != 0 {
			return false
		}
	}
	return true
}

// randomStateDict is zeroStateDict with random convolution and fc
// weights (uniform, scaled by the fan-in so the activations neither die
// nor grow through the 94 layers) and random BatchNorm shifts.
func randomStateDict(rng *rand.Rand) map[string]*torchfile.Tensor {
	sd := zeroStateDict()
	for key, tn := range sd {
		switch {
		case len(tn.Shape) >= 2:
			fanIn := 1
			for _, d := range tn.Shape[1:] {
				fanIn *= d
			}
			a := math.Sqrt(6 / float64(fanIn))
			for i := range tn.Data {
				tn.Data[i] = a * (2*rng.Float64() - 1)
			}
		case filepath.Ext(key) == ".bias":
			for i := range tn.Data {
				tn.Data[i] = 0.1 * (2*rng.Float64() - 1)
			}
		}
	}
	return sd
}
