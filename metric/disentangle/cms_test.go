package disentangle

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/metric/kernel"
)

func TestEmbedHandCase(t *testing.T) {
	// X = {0, 1}, Y = {2}, k = exp(-(x-y)²):
	// ||μ_X||² = (1 + 1 + 2e⁻¹)/4, ||μ_Y||² = 1, <μ_X, μ_Y> = (e⁻⁴ + e⁻¹)/2.
	x := mat.NewDense(2, 1, []float64{0, 1})
	y := mat.NewDense(1, 1, []float64{2})
	e, err := Embed(kernel.RBF{Gamma: 1}, x, y)
	if err != nil {
		t.Fatal(err)
	}
	xx, yy, xy := (2+2*math.Exp(-1))/4, 1.0, (math.Exp(-4)+math.Exp(-1))/2
	if math.Abs(e.XX-xx) > 1e-15 || math.Abs(e.YY-yy) > 1e-15 || math.Abs(e.XY-xy) > 1e-15 {
		t.Errorf("Embed = %+v, want {%v %v %v}", e, xx, yy, xy)
	}
	if want := xy / math.Sqrt(xx*yy); math.Abs(e.CMS()-want) > 1e-15 {
		t.Errorf("CMS = %v, want %v", e.CMS(), want)
	}
	if want := xx + yy - 2*xy; math.Abs(e.MMD2()-want) > 1e-15 {
		t.Errorf("MMD2 = %v, want %v", e.MMD2(), want)
	}
	// Identical samples: CMS 1, MMD² 0.
	e, _ = Embed(kernel.RBF{Gamma: 1}, x, x)
	if math.Abs(e.CMS()-1) > 1e-15 || math.Abs(e.MMD2()) > 1e-15 {
		t.Errorf("X vs X: CMS %v, MMD² %v", e.CMS(), e.MMD2())
	}
}

// Compare must equal the definition: Embed on every pair of batches, on
// the whole image and on each cluster's columns, averaged over pairs.
func TestCompareMatchesDefinition(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	g := Grid{3, 3, 2}
	ref, gen := randDense(r, 23, g.Dim()), randDense(r, 17, g.Dim())
	gen.Scale(1.3, gen)
	labels := []int{0, 0, 1, 2, 1, 0, 2, 2, 0}
	const gamma, batch = 0.05, 5
	got, err := Compare(context.Background(), ref, gen, g, labels, gamma, batch)
	if err != nil {
		t.Fatal(err)
	}
	k := kernel.RBF{Gamma: gamma}
	sub := func(x *mat.Dense, b int, cluster int) *mat.Dense {
		var cols []int
		for p, c := range labels {
			if c == cluster || cluster < 0 {
				for ch := 0; ch < g.C; ch++ {
					cols = append(cols, p*g.C+ch)
				}
			}
		}
		out := mat.NewDense(batch, len(cols), nil)
		for i := 0; i < batch; i++ {
			for j, col := range cols {
				out.Set(i, j, x.At(b*batch+i, col))
			}
		}
		return out
	}
	// 23 real images: 4 batches of 5 (3 dropped); 17 generated: 3 batches.
	want := Comparison{CMSClusters: make([]float64, 3), CMSProduct: 1}
	pairs := 0.0
	for a := 0; a < 4; a++ {
		for b := 0; b < 3; b++ {
			e, _ := Embed(k, sub(ref, a, -1), sub(gen, b, -1))
			want.CMSImage += e.CMS()
			want.MMD2 += e.MMD2()
			for c := 0; c < 3; c++ {
				e, _ := Embed(k, sub(ref, a, c), sub(gen, b, c))
				want.CMSClusters[c] += e.CMS()
			}
			pairs++
		}
	}
	want.CMSImage /= pairs
	want.MMD2 /= pairs
	for c := range want.CMSClusters {
		want.CMSClusters[c] /= pairs
		want.CMSProduct *= want.CMSClusters[c]
	}
	close := func(a, b float64) bool { return math.Abs(a-b) < 1e-12 }
	if !close(got.CMSImage, want.CMSImage) || !close(got.MMD2, want.MMD2) || !close(got.CMSProduct, want.CMSProduct) {
		t.Errorf("Compare = %+v\nwant      %+v", got, want)
	}
	for c := range want.CMSClusters {
		if !close(got.CMSClusters[c], want.CMSClusters[c]) {
			t.Errorf("cluster %d CMS = %v, want %v", c, got.CMSClusters[c], want.CMSClusters[c])
		}
	}

	// A set smaller than the batch is one batch; with one cluster the
	// cluster CMS is the image CMS.
	one := make([]int, g.Pixels())
	got, err = Compare(context.Background(), ref, gen, g, one, gamma, 100)
	if err != nil {
		t.Fatal(err)
	}
	e, _ := Embed(k, ref, gen)
	if !close(got.CMSImage, e.CMS()) || !close(got.CMSClusters[0], e.CMS()) || !close(got.MMD2, e.MMD2()) {
		t.Errorf("one batch, one cluster: %+v, want CMS %v MMD² %v", got, e.CMS(), e.MMD2())
	}
}

func TestCompareBadInput(t *testing.T) {
	g := Grid{2, 2, 1}
	x := mat.NewDense(5, 4, nil)
	for _, tc := range []struct {
		name   string
		labels []int
		gamma  float64
		batch  int
		y      *mat.Dense
	}{
		{"short labels", []int{0, 0, 0}, 1, 2, x},
		{"empty cluster", []int{0, 2, 0, 2}, 1, 2, x},
		{"negative label", []int{0, -1, 0, 0}, 1, 2, x},
		{"gamma", []int{0, 0, 0, 0}, -1, 2, x},
		{"batch", []int{0, 0, 0, 0}, 1, 0, x},
		{"dims", []int{0, 0, 0, 0}, 1, 2, mat.NewDense(5, 3, nil)},
	} {
		if _, err := Compare(context.Background(), x, tc.y, g, tc.labels, tc.gamma, tc.batch); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}

func TestBlockMeans(t *testing.T) {
	c := mat.NewSymDense(4, []float64{
		1, 0.8, 0.1, 0.2,
		0.8, 1, 0.3, 0.0,
		0.1, 0.3, 1, 0.5,
		0.2, 0.0, 0.5, 1,
	})
	within, between, sizes := BlockMeans(c, []int{0, 0, 1, 2})
	if sizes[0] != 2 || sizes[1] != 1 || sizes[2] != 1 {
		t.Errorf("sizes %v", sizes)
	}
	if within[0] != 0.8 || !math.IsNaN(within[1]) || !math.IsNaN(within[2]) {
		t.Errorf("within %v", within)
	}
	if between[0][1] != 0.2 || between[1][0] != 0.2 || between[0][2] != 0.1 || between[1][2] != 0.5 || between[0][0] != 0.8 {
		t.Errorf("between %v", between)
	}
}

func ExampleCompare() {
	// 2x2 grey images whose rows are independent: each row is one random
	// value repeated. The "generated" images get the top row wrong (its
	// right pixel has the opposite sign) and the bottom row right. In theory
	// the top row's CMS is (1+4γ)⁻¹ (1+8γ)^½ = √3/2 ≈ 0.866 and the bottom
	// row's 1.
	r := rand.New(rand.NewPCG(1, 1))
	g := Grid{H: 2, W: 2, C: 1}
	real, gen := mat.NewDense(600, 4, nil), mat.NewDense(600, 4, nil)
	for i := 0; i < 600; i++ {
		a, b := r.NormFloat64(), r.NormFloat64()
		real.SetRow(i, []float64{a, a, b, b})
		a, b = r.NormFloat64(), r.NormFloat64()
		gen.SetRow(i, []float64{a, -a, b, b})
	}
	labels := []int{0, 0, 1, 1} // clusters: top row, bottom row
	c, _ := Compare(context.Background(), real, gen, g, labels, 0.25, 150)
	fmt.Printf("top %.2f, bottom %.2f, product %.2f, image %.2f\n", c.CMSClusters[0], c.CMSClusters[1], c.CMSProduct, c.CMSImage)
	// Output: top 0.87, bottom 1.00, product 0.86, image 0.86
}

// A clean set (product CMS above CleanCMS) has no main cluster; a set
// that differs gets the cluster with the largest share of -log CMS.
func TestMainClusterClean(t *testing.T) {
	if c, _ := (Comparison{CMSClusters: []float64{0.999, 0.998, 0.9995}}).MainCluster(); c != -1 {
		t.Errorf("clean set (product 0.9965): main cluster %d, want none", c)
	}
	c, share := (Comparison{CMSClusters: []float64{0.999, 0.9, 0.99}}).MainCluster()
	want := math.Log(0.9) / (math.Log(0.999) + math.Log(0.9) + math.Log(0.99))
	if c != 1 || math.Abs(share-want) > 1e-12 {
		t.Errorf("main cluster %d (share %v), want 1 (%v)", c, share, want)
	}
}
