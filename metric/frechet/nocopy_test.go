package frechet

import (
	"bytes"
	"io"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/dataio"
)

// A part and merged statistics are written from the symmetric matrix's
// upper triangle a row at a time, byte for byte as from its dense copy,
// which is never made (a 16384-d covariance is 2 GiB); TakeStats scales
// the accumulator's scatter in place into what Stats copies.
func TestLargeMatricesNotCopied(t *testing.T) {
	const d = 512
	r := rand.New(rand.NewPCG(2, 3))
	acc := NewAccumulator(d)
	row := make([]float64, d)
	for range 40 {
		for j := range row {
			row[j] = r.NormFloat64()
		}
		acc.Add(row)
	}
	p := PartOf(acc, 0, 1, Listing{Kind: "features", Count: 40, Cols: d, SHA256: "x"}, Provenance{})
	dense := p.contents(false)
	dense.Symmetric = nil
	dense.Arrays["scatter"] = &dataio.Array{Shape: []int{d, d}, Data: symToDense(p.Scatter).RawMatrix().Data}
	var want, got bytes.Buffer
	if err := dataio.EncodeNPZContents(&want, dense); err != nil {
		t.Fatal(err)
	}
	if err := EncodePart(&got, p); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Error("the part's bytes differ from its dense copy's")
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if err := EncodePart(io.Discard, p); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > d*d*8/4 {
		t.Errorf("encoding a %d-d part to io.Discard allocated %d bytes (its scatter is %d)", d, alloc, d*d*8)
	}

	ws := acc.Stats(1)
	gs := acc.TakeStats(1)
	if gs.N != ws.N || !slices.Equal(gs.Mu, ws.Mu) || !mat.Equal(gs.Sigma, ws.Sigma) {
		t.Error("TakeStats differs from Stats")
	}
}
