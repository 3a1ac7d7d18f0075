package deberta

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/network/nli"
)

// fixtureDir lays the fixture out as a model directory with the given
// weights file under its released name.
func fixtureDir(t *testing.T, weights, as string) string {
	t.Helper()
	dir := t.TempDir()
	for src, dst := range map[string]string{"config.json": "config.json", "vocab.json": "vocab.json", "merges.txt": "merges.txt", weights: as} {
		b, err := os.ReadFile(filepath.Join("testdata", src))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, dst), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func fixturePairs(t *testing.T) []nli.Pair {
	t.Helper()
	b, err := os.ReadFile("testdata/pairs.json")
	if err != nil {
		t.Fatal(err)
	}
	var ps []nli.Pair
	if err := json.Unmarshal(b, &ps); err != nil {
		t.Fatal(err)
	}
	return ps
}

func TestFixture(t *testing.T) {
	ids, err := dataio.ReadArray("testdata/expected.npz", dataio.ReadOptions{Key: "ids"})
	if err != nil {
		t.Fatal(err)
	}
	mask, _ := dataio.ReadArray("testdata/expected.npz", dataio.ReadOptions{Key: "mask"})
	want, _ := dataio.ReadArray("testdata/expected.npz", dataio.ReadOptions{Key: "logits"})
	pairs := fixturePairs(t)
	for _, w := range [][2]string{{"tiny.bin", "pytorch_model.bin"}, {"tiny.safetensors", "model.safetensors"}} {
		m, err := Open(fixtureDir(t, w[0], w[1]), "deberta-tiny")
		if err != nil {
			t.Fatal(err)
		}
		L := ids.Shape[1]
		var seqs [][]int
		for i, p := range pairs {
			got := m.Encode(p)
			var ref []int
			for j := 0; j < L; j++ {
				if mask.Data[i*L+j] == 1 {
					ref = append(ref, int(ids.Data[i*L+j]))
				}
			}
			if len(got) != len(ref) {
				t.Fatalf("%s: pair %d: %d ids, want %d", w[0], i, len(got), len(ref))
			}
			for j := range got {
				if got[j] != ref[j] {
					t.Fatalf("%s: pair %d: ids %v, want %v", w[0], i, got, ref)
				}
			}
			seqs = append(seqs, got)
		}
		lg, err := m.Logits(context.Background(), seqs)
		if err != nil {
			t.Fatal(err)
		}
		var scale, worst float64
		for _, v := range want.Data {
			scale = math.Max(scale, math.Abs(v))
		}
		for i := range lg {
			for r := 0; r < 3; r++ {
				worst = math.Max(worst, math.Abs(float64(lg[i][r])-want.Data[i*3+r]))
			}
		}
		if worst > 1e-4*scale {
			t.Errorf("%s: max |Go − PyTorch| = %.3g of the largest logit %.3g", w[0], worst, scale)
		}
		t.Logf("%s: max |Go − PyTorch| = %.3g, largest logit %.3g", w[0], worst, scale)
		// One pair alone gives what it gives in the batch.
		one, err := m.Logits(context.Background(), seqs[1:2])
		if err != nil {
			t.Fatal(err)
		}
		for r := 0; r < 3; r++ {
			if math.Abs(float64(one[0][r]-lg[1][r])) > 1e-5*scale {
				t.Errorf("pair 1 alone: %v, in the batch %v", one[0], lg[1])
			}
		}
		probs, err := m.Classify(context.Background(), pairs)
		if err != nil {
			t.Fatal(err)
		}
		for i, p := range probs {
			// The fixture's config lists the labels in nli.Label order.
			mx := math.Max(want.Data[i*3], math.Max(want.Data[i*3+1], want.Data[i*3+2]))
			var s float64
			for r := 0; r < 3; r++ {
				s += math.Exp(want.Data[i*3+r] - mx)
			}
			for r := 0; r < 3; r++ {
				if e := math.Exp(want.Data[i*3+r]-mx) / s; math.Abs(p[r]-e) > 1e-4 {
					t.Errorf("pair %d: probabilities %v, want %v at %d", i, p, e, r)
				}
			}
		}
	}
}
