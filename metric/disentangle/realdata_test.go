package disentangle

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/internal/demo/imagesynth"
	"github.com/genlens/genlens/internal/testkit/shareddata"
)

// corruption is a "generated" set: the held-out real images with one
// region damaged.
type corruption struct {
	name  string
	mask  []bool
	apply func(x *mat.Dense) *mat.Dense
}

// corruptionStudy clusters the pixels on train, then compares the clean
// held-out images base and every corrupted copy of them with test, prints
// the table, and checks the diagnosis:
//
//   - the cluster whose CMS fell the most relative to its clean value
//     (the lowest ratio corrupted/clean: the factor by which the cluster
//     lowers the image-wise CMS, Theorem 1) is one covering the region:
//     it holds at least a quarter of the corrupted pixels, or at least
//     half of its own pixels are corrupted. The raw CMS is not compared
//     across clusters: a cluster's CMS is a product over its many pixels,
//     so a large cluster has a lower CMS than a small one even when
//     nothing is wrong (see the clean rows of the tables);
//   - clusters with no corrupted pixel keep their clean CMS exactly (a
//     cluster's CMS sees only its own pixels).
func corruptionStudy(t *testing.T, name string, train, test, base *mat.Dense, g Grid, opt Options, cs []corruption) {
	t.Helper()
	sets := []*mat.Dense{base}
	for _, c := range cs {
		sets = append(sets, c.apply(base))
	}
	start := time.Now()
	res, err := Analyze(context.Background(), train, test, sets, g, opt)
	if err != nil {
		t.Fatal(err)
	}
	k := len(res.Sizes)
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %v, %d CKA images, gamma %.4g, %d constant pixels, distance %v, %.1fs\n",
		name, g, res.CKAImages, res.Gamma, res.ConstantPixels, opt.Distance, time.Since(start).Seconds())
	fmt.Fprintf(&b, "%-22s %7s %7s", "set", "image", "product")
	for c := 0; c < k; c++ {
		fmt.Fprintf(&b, " %9s", fmt.Sprintf("c%d(%d)", c, res.Sizes[c]))
	}
	b.WriteString("\n")
	type check struct {
		name     string
		overlap  []int
		covering []bool
	}
	var checks []check
	row := func(label string, r Comparison, ch *check) {
		fmt.Fprintf(&b, "%-22s %7.4f %7.4f", label, r.CMSImage, r.CMSProduct)
		for c, v := range r.CMSClusters {
			mark := " "
			switch {
			case ch != nil && ch.covering[c]:
				mark = "#"
			case ch != nil && ch.overlap[c] > 0:
				mark = "*"
			}
			fmt.Fprintf(&b, " %8.4f%s", v, mark)
		}
		b.WriteString("\n")
	}
	row("clean", res.Sets[0], nil)
	for i, c := range cs {
		ch := check{name: c.name, overlap: make([]int, k), covering: make([]bool, k)}
		for p, in := range c.mask {
			if in {
				ch.overlap[res.Labels[p]]++
			}
		}
		corrupted := 0
		for _, in := range c.mask {
			if in {
				corrupted++
			}
		}
		for cl, o := range ch.overlap {
			ch.covering[cl] = 4*o >= corrupted || 2*o >= res.Sizes[cl]
		}
		row(c.name, res.Sets[i+1], &ch)
		checks = append(checks, ch)
	}
	b.WriteString("(# = cluster covering the corrupted region, * = other cluster with corrupted pixels)\n")
	b.WriteString(asciiMap(res.Labels, g))
	t.Log("\n" + b.String())

	clean := res.Sets[0].CMSClusters
	for i, ch := range checks {
		got := res.Sets[i+1].CMSClusters
		drop := 0
		for c := range got {
			if got[c]/clean[c] < got[drop]/clean[drop] {
				drop = c
			}
			if ch.overlap[c] == 0 && math.Abs(got[c]-clean[c]) > 1e-12 {
				t.Errorf("%s %s: cluster %d has no corrupted pixel but its CMS moved %.4f -> %.4f", name, ch.name, c, clean[c], got[c])
			}
		}
		if !ch.covering[drop] {
			t.Errorf("%s %s: covering clusters %v (corrupted pixels per cluster %v), but cluster %d has the largest relative drop",
				name, ch.name, ch.covering, ch.overlap, drop)
		}
	}
}

// asciiMap draws the cluster labels as characters, one per pixel.
func asciiMap(labels []int, g Grid) string {
	var b strings.Builder
	for y := 0; y < g.H; y++ {
		for x := 0; x < g.W; x++ {
			b.WriteByte("0123456789abcdefghijklmnopqrstuvwxyz"[labels[y*g.W+x]%36])
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// rows copies the rows idx of x.
func rows(x *mat.Dense, idx []int) *mat.Dense {
	_, d := x.Dims()
	out := mat.NewDense(len(idx), d, nil)
	for i, j := range idx {
		out.SetRow(i, x.RawRowView(j))
	}
	return out
}

func span(lo, hi int) []int {
	out := make([]int, 0, hi-lo)
	for i := lo; i < hi; i++ {
		out = append(out, i)
	}
	return out
}

func TestRealDigits(t *testing.T) {
	path := shareddata.Path(t, "images/digits.csv.gz")
	_, a, err := dataio.ReadCSV(path)
	if err != nil {
		t.Fatal(err)
	}
	if a.Shape[0] != 1797 || a.Shape[1] != 65 {
		t.Fatalf("digits: shape %v, want (1797, 65)", a.Shape)
	}
	// 64 pixels (0..16) and the label: keep the pixels, scaled to [-1, 1].
	x := mat.NewDense(1797, 64, nil)
	for i := 0; i < 1797; i++ {
		for j := 0; j < 64; j++ {
			x.Set(i, j, a.Data[i*65+j]/8-1)
		}
	}
	g := Grid{8, 8, 1}
	r := rand.New(rand.NewPCG(1, 1))
	cs := []corruption{
		{name: "noise top-left 4x4", mask: imagesynth.Rect(8, 8, 0, 0, 4, 4)},
		{name: "blank rows 6-7", mask: imagesynth.Rect(8, 8, 6, 0, 8, 8)},
		{name: "blur right half", mask: imagesynth.Rect(8, 8, 0, 4, 8, 8)},
	}
	cs[0].apply = func(x *mat.Dense) *mat.Dense { return imagesynth.Noise(r, x, 1, cs[0].mask, 0.5) }
	cs[1].apply = func(x *mat.Dense) *mat.Dense { return imagesynth.Fill(x, 1, cs[1].mask, -1) }
	cs[2].apply = func(x *mat.Dense) *mat.Dense { return imagesynth.Blur(x, 8, 8, 1, cs[2].mask, 1) }
	corruptionStudy(t, "digits", rows(x, span(0, 1000)), rows(x, span(1000, 1400)), rows(x, span(1400, 1797)), g, Options{}, cs)
}

func TestRealPneumoniaMNIST(t *testing.T) {
	path := shareddata.Path(t, "images/pneumoniamnist.npz")
	read := func(key string) *mat.Dense {
		a, err := dataio.ReadArray(path, dataio.ReadOptions{Key: key})
		if err != nil {
			t.Fatal(err)
		}
		if a.Rank() != 3 || a.Shape[1] != 28 || a.Shape[2] != 28 {
			t.Fatalf("%s: shape %v", key, a.Shape)
		}
		x := mat.NewDense(a.Shape[0], 784, nil)
		for i, v := range a.Data {
			x.RawMatrix().Data[i] = v/127.5 - 1
		}
		return x
	}
	train, test, val := read("train_images"), read("test_images"), read("val_images")
	g := Grid{28, 28, 1}
	r := rand.New(rand.NewPCG(2, 2))
	cs := []corruption{
		{name: "noise top-left 14x14", mask: imagesynth.Rect(28, 28, 0, 0, 14, 14)},
		{name: "blank rows 22-27", mask: imagesynth.Rect(28, 28, 22, 0, 28, 28)},
		{name: "blur centre 10x10", mask: imagesynth.Rect(28, 28, 9, 9, 19, 19)},
	}
	cs[0].apply = func(x *mat.Dense) *mat.Dense { return imagesynth.Noise(r, x, 1, cs[0].mask, 0.5) }
	cs[1].apply = func(x *mat.Dense) *mat.Dense { return imagesynth.Fill(x, 1, cs[1].mask, -1) }
	cs[2].apply = func(x *mat.Dense) *mat.Dense { return imagesynth.Blur(x, 28, 28, 1, cs[2].mask, 2) }
	// 500 training images in batches of 50 keep the test fast; the
	// paper's 100 x 1000 setting is BenchmarkPixelCKA.
	corruptionStudy(t, "pneumoniamnist", rows(train, span(0, 500)), test, val, g, Options{CKABatch: 50, CKAImages: 500}, cs)
}

func TestRealOlivetti(t *testing.T) {
	path := shareddata.Path(t, "images/olivetti_faces_400x64x64_uint8.npy")
	a, err := dataio.ReadArray(path, dataio.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if a.Rank() != 3 || a.Shape[0] != 400 || a.Shape[1] != 64 {
		t.Fatalf("olivetti: shape %v", a.Shape)
	}
	x := mat.NewDense(400, 4096, nil)
	for i, v := range a.Data {
		x.RawMatrix().Data[i] = v/127.5 - 1
	}
	// 40 people x 10 images: images 0-4 of each person train, 5-7 test,
	// 8-9 are the "generated" base, so every split has every person.
	var tr, te, ge []int
	for i := 0; i < 400; i++ {
		switch j := i % 10; {
		case j < 5:
			tr = append(tr, i)
		case j < 8:
			te = append(te, i)
		default:
			ge = append(ge, i)
		}
	}
	g := Grid{64, 64, 1}
	r := rand.New(rand.NewPCG(3, 3))
	cs := []corruption{
		{name: "noise bottom-right", mask: imagesynth.Rect(64, 64, 32, 32, 64, 64)},
		{name: "blank rows 0-11", mask: imagesynth.Rect(64, 64, 0, 0, 12, 64)},
		{name: "blur centre 24x24", mask: imagesynth.Rect(64, 64, 20, 20, 44, 44)},
	}
	cs[0].apply = func(x *mat.Dense) *mat.Dense { return imagesynth.Noise(r, x, 1, cs[0].mask, 0.5) }
	cs[1].apply = func(x *mat.Dense) *mat.Dense { return imagesynth.Fill(x, 1, cs[1].mask, -1) }
	cs[2].apply = func(x *mat.Dense) *mat.Dense { return imagesynth.Blur(x, 64, 64, 1, cs[2].mask, 3) }
	corruptionStudy(t, "olivetti", rows(x, tr), rows(x, te), rows(x, ge), g, Options{CKABatch: 25, CKAImages: 100, Distance: OneMinusCKA}, cs)
}
