package imagejob

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/metric/frechet"
)

// BenchmarkStatsMerge merges part files of 2048-d pool3 statistics from
// disk, as 'genlens stats merge' does: headers first, then each part read
// and pushed into the tree. GENLENS_BENCH_PARTS sets the part count
// (default 200, 6.7 GB of files in a temporary directory).
//
//	go test ./job/imagejob -run '^$' -bench StatsMerge -benchtime 1x -count 3
func BenchmarkStatsMerge(b *testing.B) {
	k := 200
	if v, err := strconv.Atoi(os.Getenv("GENLENS_BENCH_PARTS")); err == nil && v > 0 {
		k = v
	}
	const d = 2048
	rng := rand.New(rand.NewPCG(1, 2))
	x := mat.NewDense(64, d, nil)
	for i := range x.RawMatrix().Data {
		x.RawMatrix().Data[i] = rng.NormFloat64()
	}
	acc := frechet.NewAccumulator(d)
	acc.AddRows(x)
	dir := b.TempDir()
	var parts []string
	var size int64
	for i := 0; i < k; i++ {
		p := frechet.PartOf(acc, i, k, frechet.Listing{Kind: "folder", Count: 64 * k, SHA256: "00"}, frechet.Provenance{Embedder: "inception-v3", Mode: "pytorch-fid", Dims: "2048", Weights: "00"})
		path := filepath.Join(dir, fmt.Sprintf("part-%d.npz", i))
		if err := frechet.WritePart(path, p); err != nil {
			b.Fatal(err)
		}
		st, _ := os.Stat(path)
		size = st.Size()
		parts = append(parts, path)
	}
	b.ResetTimer()
	cpu0 := cpuSeconds()
	for range b.N {
		res, err := StatsMerge(context.Background(), job.Env{}, StatsMergeRequest{Parts: parts})
		if err != nil || res.N != 64*k {
			b.Fatal(err)
		}
	}
	b.ReportMetric((cpuSeconds()-cpu0)/float64(b.N), "cpu-s/op")
	b.ReportMetric(float64(size), "bytes/part")
}
