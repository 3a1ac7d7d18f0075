package frechet

import (
	"bytes"
	"testing"
	"testing/fstest"

	"github.com/genlens/genlens/internal/tensor/membudget"
)

// FuzzReadPart reads hostile part files: whatever the bytes declare
// (shard counts, shapes, rows), ReadPart returns a part or an error,
// within a small memory budget, and a part it returns is whole.
func FuzzReadPart(f *testing.F) {
	a := NewAccumulator(3)
	a.Add([]float64{1, 2, 3})
	a.Add([]float64{2, 0, 1})
	var buf bytes.Buffer
	if err := EncodePart(&buf, PartOf(a, 0, 2, Listing{Kind: "features", Count: 4, Cols: 3, SHA256: "ab"}, Provenance{})); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Fuzz(func(t *testing.T, b []byte) {
		defer membudget.SetLimit(membudget.SetLimit(8 << 20))
		p, err := ReadPart(fstest.MapFS{"p.npz": {Data: b}}, "p.npz")
		if err != nil {
			return
		}
		if p.Shards < 1 || p.Shards > MaxShards || p.Shard >= p.Shards || p.Scatter.SymmetricDim() != len(p.Mean) {
			t.Fatalf("an inconsistent part accepted: shard %d of %d, dim %d", p.Shard, p.Shards, len(p.Mean))
		}
	})
}
