package cluster

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// lineDistances returns |x_i - x_j| for points on a line.
func lineDistances(x ...float64) *mat.SymDense {
	d := mat.NewSymDense(len(x), nil)
	for i := range x {
		for j := i + 1; j < len(x); j++ {
			d.SetSym(i, j, math.Abs(x[i]-x[j]))
		}
	}
	return d
}

// Points 0, 1, 3, 7 on a line, merged by hand (and as scipy's linkage
// gives them):
//
//	single:   {0,1}@1, {0,1,3}@min(3,2)=2, all@min(7,6,4)=4
//	complete: {0,1}@1, {0,1,3}@max(3,2)=3 (< 3–7 = 4), all@7
//	average:  {0,1}@1, {0,1,3}@(3+2)/2=2.5, all@(7+6+4)/3=17/3
//	ward:     {0,1}@1, {0,1,3}@sqrt(2·2·1/3)·|0.5-3|, all@sqrt(2·3·1/4)·|4/3-7|
func TestHandCases(t *testing.T) {
	d := lineDistances(0, 1, 3, 7)
	tests := []struct {
		l    Linkage
		want []Merge
	}{
		{Single, []Merge{{0, 1, 1, 2}, {2, 4, 2, 3}, {3, 5, 4, 4}}},
		{Complete, []Merge{{0, 1, 1, 2}, {2, 4, 3, 3}, {3, 5, 7, 4}}},
		{Average, []Merge{{0, 1, 1, 2}, {2, 4, 2.5, 3}, {3, 5, 17.0 / 3, 4}}},
		{Ward, []Merge{{0, 1, 1, 2}, {2, 4, math.Sqrt(4.0/3) * 2.5, 3}, {3, 5, math.Sqrt(1.5) * (7 - 4.0/3), 4}}},
	}
	for _, tc := range tests {
		t.Run(tc.l.String(), func(t *testing.T) {
			tr, err := Agglomerate(d, tc.l)
			if err != nil {
				t.Fatal(err)
			}
			if len(tr.Merges) != len(tc.want) {
				t.Fatalf("%d merges, want %d", len(tr.Merges), len(tc.want))
			}
			for i, m := range tr.Merges {
				w := tc.want[i]
				if m.A != w.A || m.B != w.B || m.Size != w.Size || math.Abs(m.Height-w.Height) > 1e-12 {
					t.Errorf("merge %d = %+v, want %+v", i, m, w)
				}
			}
		})
	}
}

func TestCuts(t *testing.T) {
	// Two tight groups {0,1,2} and {5,6} far from a singleton 20.
	d := lineDistances(0, 1, 2, 20, 5, 6)
	tr, err := Agglomerate(d, Average)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		k    int
		want []int
	}{
		{1, []int{0, 0, 0, 0, 0, 0}},
		{2, []int{0, 0, 0, 1, 0, 0}},
		{3, []int{0, 0, 0, 2, 1, 1}},
		{6, []int{0, 1, 2, 3, 4, 5}},
	}
	for _, tc := range tests {
		got, err := tr.CutK(tc.k)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("CutK(%d) = %v, %v; want %v", tc.k, got, err, tc.want)
		}
	}
	for _, k := range []int{0, 7, -1} {
		if _, err := tr.CutK(k); err == nil {
			t.Errorf("CutK(%d): no error", k)
		}
	}
	// Heights: 1, 1, 1.5 ({0,1,2}), 4.5 ({0,1,2}+{5,6}: mean of 5,4,3,6,5,4),
	// then 20 joins. A cut at 1.5 keeps the three groups; at 1.4 {2} is apart.
	if got, want := tr.CutHeight(1.5), []int{0, 0, 0, 2, 1, 1}; !slices.Equal(got, want) {
		t.Errorf("CutHeight(1.5) = %v, want %v", got, want)
	}
	if got, want := tr.CutHeight(1.4), []int{0, 0, 2, 3, 1, 1}; !slices.Equal(got, want) {
		t.Errorf("CutHeight(1.4) = %v, want %v", got, want)
	}
	if got := tr.CutHeight(100); !slices.Equal(got, make([]int, 6)) {
		t.Errorf("CutHeight(100) = %v", got)
	}
}

func TestRelabel(t *testing.T) {
	got := Relabel([]int{7, 3, 3, 9, 7, 3, 9})
	// Sizes: 3 -> 3 members, 7 -> 2 (first at 0), 9 -> 2 (first at 3).
	if want := []int{1, 0, 0, 2, 1, 0, 2}; !slices.Equal(got, want) {
		t.Errorf("Relabel = %v, want %v", got, want)
	}
}

// naive is the textbook O(n³) agglomeration: merge the closest pair of
// active clusters, with distances recomputed from the members (not by
// Lance–Williams), which checks the update formulas independently.
func naive(x [][]float64, l Linkage) []float64 {
	dist := func(a, b []float64) float64 {
		var s float64
		for i := range a {
			s += (a[i] - b[i]) * (a[i] - b[i])
		}
		return math.Sqrt(s)
	}
	clusters := make([][]int, len(x))
	for i := range clusters {
		clusters[i] = []int{i}
	}
	linkDist := func(a, b []int) float64 {
		switch l {
		case Ward:
			// sqrt(2 na nb / (na + nb)) ||centroid_a - centroid_b||
			ca, cb := make([]float64, len(x[0])), make([]float64, len(x[0]))
			for _, i := range a {
				for k, v := range x[i] {
					ca[k] += v / float64(len(a))
				}
			}
			for _, i := range b {
				for k, v := range x[i] {
					cb[k] += v / float64(len(b))
				}
			}
			na, nb := float64(len(a)), float64(len(b))
			return math.Sqrt(2*na*nb/(na+nb)) * dist(ca, cb)
		}
		var s float64
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, i := range a {
			for _, j := range b {
				d := dist(x[i], x[j])
				s += d
				lo, hi = math.Min(lo, d), math.Max(hi, d)
			}
		}
		switch l {
		case Single:
			return lo
		case Complete:
			return hi
		}
		return s / float64(len(a)*len(b))
	}
	var heights []float64
	for len(clusters) > 1 {
		bi, bj, bd := 0, 1, math.Inf(1)
		for i := range clusters {
			for j := i + 1; j < len(clusters); j++ {
				if d := linkDist(clusters[i], clusters[j]); d < bd {
					bi, bj, bd = i, j, d
				}
			}
		}
		heights = append(heights, bd)
		clusters[bi] = append(clusters[bi], clusters[bj]...)
		clusters = slices.Delete(clusters, bj, bj+1)
	}
	slices.Sort(heights)
	return heights
}

func TestAgainstNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for trial := 0; trial < 5; trial++ {
		n, dim := 5+r.IntN(25), 1+r.IntN(4)
		x := make([][]float64, n)
		d := mat.NewSymDense(n, nil)
		for i := range x {
			x[i] = make([]float64, dim)
			for k := range x[i] {
				x[i][k] = r.NormFloat64()
			}
		}
		for i := range x {
			for j := i + 1; j < n; j++ {
				var s float64
				for k := range x[i] {
					s += (x[i][k] - x[j][k]) * (x[i][k] - x[j][k])
				}
				d.SetSym(i, j, math.Sqrt(s))
			}
		}
		for _, l := range []Linkage{Average, Complete, Single, Ward} {
			tr, err := Agglomerate(d, l)
			if err != nil {
				t.Fatal(err)
			}
			want := naive(x, l)
			for i, m := range tr.Merges {
				if math.Abs(m.Height-want[i]) > 1e-9*(1+want[i]) {
					t.Errorf("trial %d %v n=%d: merge %d height %v, want %v", trial, l, n, i, m.Height, want[i])
				}
				if i > 0 && m.Height < tr.Merges[i-1].Height {
					t.Errorf("%v: heights not sorted at %d", l, i)
				}
			}
			if last := tr.Merges[len(tr.Merges)-1]; last.Size != n {
				t.Errorf("%v: last merge has %d leaves, want %d", l, last.Size, n)
			}
		}
	}
}

// A planted block structure: items in the same block are at distance
// ~0.2, items in different blocks at ~1 (a CKA-like pattern with noise).
// Every linkage must recover the blocks exactly, labelled by size.
func TestPlantedBlocks(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	sizes := []int{9, 30, 4, 17}
	var truth []int
	for b, s := range sizes {
		for range s {
			truth = append(truth, b)
		}
	}
	// Shuffle items so blocks are not contiguous.
	r.Shuffle(len(truth), func(i, j int) { truth[i], truth[j] = truth[j], truth[i] })
	n := len(truth)
	d := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			v := 1 + 0.1*r.Float64()
			if truth[i] == truth[j] {
				v = 0.2 + 0.1*r.Float64()
			}
			d.SetSym(i, j, v)
		}
	}
	// Expected labels: blocks ordered by size: 30 -> 0, 17 -> 1, 9 -> 2, 4 -> 3.
	rank := map[int]int{1: 0, 3: 1, 0: 2, 2: 3}
	for _, l := range []Linkage{Average, Complete, Single, Ward} {
		tr, err := Agglomerate(d, l)
		if err != nil {
			t.Fatal(err)
		}
		got, err := tr.CutK(len(sizes))
		if err != nil {
			t.Fatal(err)
		}
		for i := range got {
			if got[i] != rank[truth[i]] {
				t.Fatalf("%v: item %d (block %d) labelled %d, want %d", l, i, truth[i], got[i], rank[truth[i]])
			}
		}
	}
}

func TestTiesAndDegenerate(t *testing.T) {
	// All distances equal: any merge order is valid, but the tree must be
	// complete, heights all 1 (average/single/complete) and cuts exact.
	n := 6
	d := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			d.SetSym(i, j, 1)
		}
	}
	for _, l := range []Linkage{Average, Complete, Single} {
		tr, err := Agglomerate(d, l)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range tr.Merges {
			if m.Height != 1 {
				t.Errorf("%v: height %v, want 1", l, m.Height)
			}
		}
		for k := 1; k <= n; k++ {
			lab, _ := tr.CutK(k)
			if got := slices.Max(lab) + 1; got != k {
				t.Errorf("%v: CutK(%d) gave %d clusters", l, k, got)
			}
		}
	}
	// One item: no merges, one cluster.
	tr, err := Agglomerate(mat.NewSymDense(1, nil), Average)
	if err != nil || len(tr.Merges) != 0 {
		t.Fatalf("n=1: %v %v", tr, err)
	}
	if lab, err := tr.CutK(1); err != nil || !slices.Equal(lab, []int{0}) {
		t.Errorf("n=1 cut: %v %v", lab, err)
	}
	// Coincident points: zero distances are fine.
	if _, err := Agglomerate(lineDistances(1, 1, 1, 2), Ward); err != nil {
		t.Error(err)
	}
}

func TestBadInput(t *testing.T) {
	d := lineDistances(0, 1, 2)
	d.SetSym(0, 2, math.NaN())
	if _, err := Agglomerate(d, Average); err == nil {
		t.Error("NaN distance: no error")
	}
	d.SetSym(0, 2, -1)
	if _, err := Agglomerate(d, Average); err == nil {
		t.Error("negative distance: no error")
	}
	if _, err := Agglomerate(mat.NewSymDense(2, nil), Linkage(9)); err == nil {
		t.Error("bad linkage: no error")
	}
	for _, s := range []string{"average", "Complete", " single", "WARD"} {
		if _, err := ParseLinkage(s); err != nil {
			t.Errorf("ParseLinkage(%q): %v", s, err)
		}
	}
	if _, err := ParseLinkage("centroid"); err == nil {
		t.Error("ParseLinkage(centroid): no error")
	}
}

// The performance target: clustering 4096 points under 10 s.
// Run: go test ./cluster -run XXX -bench Agglomerate4096 -count 3
func BenchmarkAgglomerate4096(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	const n, dim = 4096, 8
	x := make([][]float64, n)
	for i := range x {
		x[i] = make([]float64, dim)
		for k := range x[i] {
			x[i][k] = r.NormFloat64() + float64(i%16)
		}
	}
	d := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			var s float64
			for k := range x[i] {
				s += (x[i][k] - x[j][k]) * (x[i][k] - x[j][k])
			}
			d.SetSym(i, j, math.Sqrt(s))
		}
	}
	for _, l := range []Linkage{Average, Complete, Single, Ward} {
		b.Run(l.String(), func(b *testing.B) {
			for b.Loop() {
				if _, err := Agglomerate(d, l); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
