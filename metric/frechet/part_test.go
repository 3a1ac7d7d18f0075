package frechet

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/dataio"
)

// exactStats is the reference of the sharding tests: the mean and the
// (n-1) covariance of the rows of x computed in 256-bit floating point
// (two passes: the mean, then the products of the centred rows), rounded
// to float64 once at the end. It is what np.mean and np.cov(rowvar=False)
// compute, without their rounding.
func exactStats(x *mat.Dense) ([]float64, *mat.SymDense) {
	n, d := x.Dims()
	const prec = 256
	nb := new(big.Float).SetPrec(prec).SetInt64(int64(n))
	mean := make([]*big.Float, d)
	for j := range mean {
		s := new(big.Float).SetPrec(prec)
		for i := 0; i < n; i++ {
			s.Add(s, new(big.Float).SetPrec(prec).SetFloat64(x.At(i, j)))
		}
		mean[j] = s.Quo(s, nb)
	}
	c := make([][]*big.Float, n)
	for i := range c {
		c[i] = make([]*big.Float, d)
		for j := range c[i] {
			v := new(big.Float).SetPrec(prec).SetFloat64(x.At(i, j))
			c[i][j] = v.Sub(v, mean[j])
		}
	}
	mu := make([]float64, d)
	for j := range mu {
		mu[j], _ = mean[j].Float64()
	}
	sigma := mat.NewSymDense(d, nil)
	den := new(big.Float).SetPrec(prec).SetInt64(int64(n - 1))
	p := new(big.Float).SetPrec(prec)
	for a := 0; a < d; a++ {
		for b := a; b < d; b++ {
			s := new(big.Float).SetPrec(prec)
			for i := 0; i < n; i++ {
				s.Add(s, p.Mul(c[i][a], c[i][b]))
			}
			v, _ := s.Quo(s, den).Float64()
			sigma.SetSym(a, b, v)
		}
	}
	return mu, sigma
}

// relVec and relSym are ‖a − b‖_F / ‖b‖_F.
func relVec(a, b []float64) float64 {
	var num, den float64
	for i := range a {
		num += (a[i] - b[i]) * (a[i] - b[i])
		den += b[i] * b[i]
	}
	return math.Sqrt(num / den)
}

func relSym(a, b *mat.SymDense) float64 {
	var num, den float64
	d := b.SymmetricDim()
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			e := a.At(i, j) - b.At(i, j)
			num += e * e
			den += b.At(i, j) * b.At(i, j)
		}
	}
	return math.Sqrt(num / den)
}

// shardRows returns the parts of the contiguous row ranges
// [i·n/K, (i+1)·n/K) of x, as 'genlens stats --shards K' splits a
// feature file, each written to a part file and read back.
func shardRows(t testing.TB, x *mat.Dense, k int) []*Part {
	n, d := x.Dims()
	dir := t.TempDir()
	l := Listing{Kind: "features", Count: n, Cols: d, SHA256: "00"}
	var parts []*Part
	for i := 0; i < k; i++ {
		lo, hi := i*n/k, (i+1)*n/k
		a := NewAccumulator(d)
		a.AddRows(x.Slice(lo, hi, 0, d).(*mat.Dense))
		path := filepath.Join(dir, fmt.Sprintf("part-%d.npz", i))
		if err := WritePart(path, PartOf(a, i, k, l, Provenance{Embedder: "features"})); err != nil {
			t.Fatal(err)
		}
		p, err := ReadPart(dataio.HostFS, path)
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, p)
	}
	return parts
}

// rawSumStats merges the parts as torchmetrics and StyleGAN2-ADA do:
// float64 sums Σx and Σxxᵀ per shard, added, then
// Σ = (Σxxᵀ − Σx Σxᵀ / n) / (n − 1).
func rawSumStats(x *mat.Dense, k int) ([]float64, *mat.SymDense) {
	n, d := x.Dims()
	s1 := make([]float64, d)
	s2 := mat.NewSymDense(d, nil)
	for i := 0; i < k; i++ {
		p1 := make([]float64, d)
		p2 := make([]float64, d*d)
		for r := i * n / k; r < (i+1)*n/k; r++ {
			row := x.RawRowView(r)
			for a, va := range row {
				p1[a] += va
				for b, vb := range row {
					p2[a*d+b] += va * vb
				}
			}
		}
		for a := 0; a < d; a++ {
			s1[a] += p1[a]
			for b := a; b < d; b++ {
				s2.SetSym(a, b, s2.At(a, b)+p2[a*d+b])
			}
		}
	}
	mu := make([]float64, d)
	sigma := mat.NewSymDense(d, nil)
	for a := 0; a < d; a++ {
		mu[a] = s1[a] / float64(n)
		for b := a; b < d; b++ {
			sigma.SetSym(a, b, (s2.At(a, b)-s1[a]*s1[b]/float64(n))/float64(n-1))
		}
	}
	return mu, sigma
}

// TestMergedPartsAccuracy: the statistics merged from K shards of a
// feature file match the exact statistics of the whole file to 1e-12
// relative, 1e-9 with every feature offset by 1e4 and 3e-9 by 1e8 (where
// a part's float64 mean is rounded at 7.5e-9); the raw-sum formula of
// the one-group implementations misses the offset bounds by orders of
// magnitude.
func TestMergedPartsAccuracy(t *testing.T) {
	const n, d = 3000, 12
	for _, tc := range []struct {
		offset, tol float64
	}{{0, 1e-12}, {1e4, 1e-9}, {1e8, 3e-9}} {
		rng := rand.New(rand.NewPCG(20, uint64(tc.offset)))
		x := correlated(rng, n, d, tc.offset)
		mu, sigma := exactStats(x)
		for _, k := range []int{1, 2, 7, 64} {
			t.Run(fmt.Sprintf("offset=%g/K=%d", tc.offset, k), func(t *testing.T) {
				st := MergeParts(shardRows(t, x, k)).Stats(1)
				if st.N != n {
					t.Fatalf("n = %d, want %d", st.N, n)
				}
				em, es := relVec(st.Mu, mu), relSym(st.Sigma, sigma)
				t.Logf("relative error: mean %.2g, sigma %.2g (bound %g)", em, es, tc.tol)
				if em > tc.tol || es > tc.tol {
					t.Errorf("relative error mean %.3g, sigma %.3g; want <= %g", em, es, tc.tol)
				}
			})
		}
		if tc.offset == 0 {
			continue
		}
		// The raw-sum formula fails the same bound (K = 7).
		_, rs := rawSumStats(x, 7)
		es := relSym(rs, sigma)
		t.Logf("offset %g: raw-sum formula's sigma relative error %.2g", tc.offset, es)
		if es <= tc.tol {
			t.Errorf("offset %g: the raw-sum formula meets the bound %g (error %.3g): the test cannot tell a careful merge from a careless one", tc.offset, tc.tol, es)
		}
	}
}

// TestMergePartsOrderIndependent: any order of the parts gives the same
// bits.
func TestMergePartsOrderIndependent(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	x := correlated(rng, 700, 9, 1e4)
	for _, k := range []int{2, 7, 64} {
		parts := shardRows(t, x, k)
		want := MergeParts(parts).Stats(1)
		for trial := 0; trial < 20; trial++ {
			sh := append([]*Part(nil), parts...)
			rng.Shuffle(len(sh), func(i, j int) { sh[i], sh[j] = sh[j], sh[i] })
			got := MergeParts(sh).Stats(1)
			for j := range want.Mu {
				if math.Float64bits(got.Mu[j]) != math.Float64bits(want.Mu[j]) {
					t.Fatalf("K=%d trial %d: mu[%d] %v != %v", k, trial, j, got.Mu[j], want.Mu[j])
				}
				for i := 0; i <= j; i++ {
					if math.Float64bits(got.Sigma.At(i, j)) != math.Float64bits(want.Sigma.At(i, j)) {
						t.Fatalf("K=%d trial %d: sigma[%d][%d] differs in bits", k, trial, i, j)
					}
				}
			}
		}
	}
}

// TestTreeMergerShape pins the tree: ((0 1) (2 3)) 4 for five leaves,
// recorded through the merge counts.
func TestTreeMergerShape(t *testing.T) {
	var tm TreeMerger
	for i := 0; i < 5; i++ {
		a := NewAccumulator(1)
		a.Add([]float64{float64(i)})
		tm.Push(a)
		if i == 3 && (len(tm.stack) != 1 || tm.stack[0].size != 4) {
			t.Fatalf("after 4 pushes the stack is %d nodes, want one of 4", len(tm.stack))
		}
	}
	if len(tm.stack) != 2 {
		t.Fatalf("after 5 pushes the stack is %d nodes, want 2 (4 + 1)", len(tm.stack))
	}
	r := tm.Result()
	if r.N() != 5 || r.Mean()[0] != 2 || r.Cov(1).At(0, 0) != 2.5 {
		t.Fatalf("n %d, mean %v, var %v; want 5, 2, 2.5", r.N(), r.Mean()[0], r.Cov(1).At(0, 0))
	}
}

func TestPartRoundTripAndErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	x := correlated(rng, 50, 4, 0)
	a := NewAccumulator(4)
	a.AddRows(x)
	p := PartOf(a, 2, 5, Listing{Kind: "folder", Count: 200, SHA256: "abc"}, Provenance{Embedder: "inception-v3", Mode: "pytorch-fid", Dims: "2048", Weights: "f00"})
	path := filepath.Join(t.TempDir(), "p.npz")
	if err := WritePart(path, p); err != nil {
		t.Fatal(err)
	}
	q, err := ReadPart(dataio.HostFS, path)
	if err != nil {
		t.Fatal(err)
	}
	if q.N != p.N || q.Shard != 2 || q.Shards != 5 || q.Listing != p.Listing || q.Prov != p.Prov || relVec(q.Mean, p.Mean) != 0 || relSym(q.Scatter, p.Scatter) != 0 {
		t.Fatalf("round trip changed the part: %+v vs %+v", q, p)
	}
	if msg := p.Compatible(q); msg != "" {
		t.Fatalf("a part is not compatible with itself: %s", msg)
	}
	for _, tc := range []struct {
		name   string
		change func(*Part)
	}{
		{"shards", func(o *Part) { o.Shards = 6 }},
		{"listing", func(o *Part) { o.Listing.Count = 201 }},
		{"hash", func(o *Part) { o.Listing.SHA256 = "abd" }},
		{"mode", func(o *Part) { o.Prov.Mode = "tf" }},
		{"weights", func(o *Part) { o.Prov.Weights = "f01" }},
	} {
		o := *q
		tc.change(&o)
		if p.Compatible(&o) == "" {
			t.Errorf("%s: a different part is compatible", tc.name)
		}
	}
	// A statistics file is not a part.
	sp := filepath.Join(t.TempDir(), "s.npz")
	if err := WriteStats(sp, a.Stats(1)); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadPart(dataio.HostFS, sp); err == nil {
		t.Error("a statistics file read as a part")
	}
	// An out-of-range shard index in the file.
	bad := *p
	bad.Shard = 5
	bp := filepath.Join(t.TempDir(), "b.npz")
	if err := WritePart(bp, &bad); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadPart(dataio.HostFS, bp); err == nil {
		t.Error("shard 5 of 5 accepted")
	}
}
