package cluster

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/internal/tensor/membudget"
)

// Linkage is the rule for the distance between two clusters.
type Linkage int

const (
	// Average linkage (UPGMA): the mean distance between members.
	Average Linkage = iota
	// Complete linkage: the largest distance between members.
	Complete
	// Single linkage: the smallest distance between members.
	Single
	// Ward linkage: the increase in within-cluster sum of squares,
	// reported as a distance (scipy's convention).
	Ward
)

var linkageNames = []string{"average", "complete", "single", "ward"}

// String returns the linkage's name as ParseLinkage accepts it.
func (l Linkage) String() string {
	if l < 0 || int(l) >= len(linkageNames) {
		return fmt.Sprintf("Linkage(%d)", int(l))
	}
	return linkageNames[l]
}

// ParseLinkage parses "average", "complete", "single" or "ward".
func ParseLinkage(s string) (Linkage, error) {
	i := slices.Index(linkageNames, strings.ToLower(strings.TrimSpace(s)))
	if i < 0 {
		return 0, fmt.Errorf("cluster: unknown linkage %q (want %s)", s, strings.Join(linkageNames, ", "))
	}
	return Linkage(i), nil
}

// Merge is one step of the agglomeration: clusters A and B (leaves are
// 0..n-1, the cluster made by merge i is n+i) join at Height into a
// cluster of Size leaves. A < B.
type Merge struct {
	A, B   int
	Height float64
	Size   int
}

// Tree is the result of agglomerative clustering of N items: N-1 merges
// in non-decreasing height, like the rows of scipy's linkage matrix.
type Tree struct {
	N      int
	Merges []Merge
}

// Agglomerate clusters the n items whose pairwise distances are d (the
// diagonal is ignored) with the given linkage. Distances must be finite
// and non-negative; d is not modified.
func Agglomerate(d mat.Symmetric, l Linkage) (*Tree, error) {
	if l < Average || l > Ward {
		return nil, fmt.Errorf("cluster: unknown linkage %d", int(l))
	}
	n := d.SymmetricDim()
	if n < 1 {
		return nil, fmt.Errorf("cluster: no items")
	}
	// Full n×n storage: rows scan contiguously in the nearest-neighbour
	// search, and the Lance–Williams update writes a row and a column.
	if err := membudget.Check("the working copy of the distances", 1, n, n); err != nil {
		return nil, err
	}
	w := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			v := d.At(i, j)
			if !(v >= 0) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("cluster: distance between items %d and %d is %g (want finite and >= 0)", i, j, v)
			}
			if l == Ward {
				// Ward's update is linear in squared distances.
				v *= v
			}
			w[i*n+j], w[j*n+i] = v, v
		}
	}
	merges := nnChain(w, n, l)
	if l == Ward {
		for i := range merges {
			merges[i].height = math.Sqrt(merges[i].height)
		}
	}
	return newTree(n, merges), nil
}

// rawMerge is a merge found by the chain, in slot numbering: the merged
// cluster lives on in slot b.
type rawMerge struct {
	a, b   int
	height float64
}

// nnChain runs the nearest-neighbour chain algorithm on the n×n distance
// matrix w, which it overwrites. Merges come out in the order found, not
// sorted by height.
func nnChain(w []float64, n int, l Linkage) []rawMerge {
	size := make([]int, n)
	active := make([]bool, n)
	for i := range size {
		size[i], active[i] = 1, true
	}
	out := make([]rawMerge, 0, n-1)
	chain := make([]int, 0, n)
	next := 0 // smallest slot that may still be active
	for len(out) < n-1 {
		if len(chain) == 0 {
			for !active[next] {
				next++
			}
			chain = append(chain, next)
		}
		a := chain[len(chain)-1]
		prev := -1
		if len(chain) > 1 {
			prev = chain[len(chain)-2]
		}
		// Nearest active neighbour of a. Ties go to the previous chain
		// element (so the chain cannot cycle), then to the lowest slot.
		best, bd := -1, math.Inf(1)
		if prev >= 0 {
			best, bd = prev, w[a*n+prev]
		}
		row := w[a*n : a*n+n]
		for j, v := range row {
			if j != a && active[j] && v < bd {
				best, bd = j, v
			}
		}
		if best != prev {
			chain = append(chain, best)
			continue
		}
		// a and prev are reciprocal nearest neighbours: merge them into
		// slot b (the larger index keeps the lower slot free for scans).
		chain = chain[:len(chain)-2]
		x, y := min(a, prev), max(a, prev)
		out = append(out, rawMerge{a: x, b: y, height: bd})
		update(w, n, l, x, y, size, active)
		active[x] = false
		size[y] += size[x]
	}
	return out
}

// update writes into row and column y the Lance–Williams distances from
// the union of clusters x and y to every other active cluster.
func update(w []float64, n int, l Linkage, x, y int, size []int, active []bool) {
	nx, ny := float64(size[x]), float64(size[y])
	dxy := w[x*n+y]
	for k := 0; k < n; k++ {
		if !active[k] || k == x || k == y {
			continue
		}
		dx, dy := w[x*n+k], w[y*n+k]
		var v float64
		switch l {
		case Single:
			v = math.Min(dx, dy)
		case Complete:
			v = math.Max(dx, dy)
		case Average:
			v = (nx*dx + ny*dy) / (nx + ny)
		case Ward:
			nk := float64(size[k])
			v = ((nx+nk)*dx + (ny+nk)*dy - nk*dxy) / (nx + ny + nk)
			if v < 0 { // rounding on (near-)coincident points
				v = 0
			}
		}
		w[y*n+k], w[k*n+y] = v, v
	}
}

// newTree sorts the merges by height (stably, so equal heights keep the
// order found) and renames clusters to scipy's numbering.
func newTree(n int, raw []rawMerge) *Tree {
	slices.SortStableFunc(raw, func(a, b rawMerge) int { return cmp.Compare(a.height, b.height) })
	uf := newUnionFind(n)
	// id[root] is the current cluster id of the set whose root is root.
	id := make([]int, n)
	size := make([]int, n)
	for i := range id {
		id[i], size[i] = i, 1
	}
	t := &Tree{N: n, Merges: make([]Merge, len(raw))}
	for i, m := range raw {
		ra, rb := uf.find(m.a), uf.find(m.b)
		a, b := id[ra], id[rb]
		s := size[ra] + size[rb]
		r := uf.union(ra, rb)
		id[r], size[r] = n+i, s
		t.Merges[i] = Merge{A: min(a, b), B: max(a, b), Height: m.height, Size: s}
	}
	return t
}

// CutK returns labels for the k clusters left after the n-k lowest
// merges, ordered by size (see the package documentation).
func (t *Tree) CutK(k int) ([]int, error) {
	if k < 1 || k > t.N {
		return nil, fmt.Errorf("cluster: cannot cut %d items into %d clusters", t.N, k)
	}
	return t.labels(t.N - k), nil
}

// CutHeight returns labels for the clusters formed by all merges at or
// below height h (scipy's fcluster criterion "distance"), ordered by size.
func (t *Tree) CutHeight(h float64) []int {
	m := 0
	for m < len(t.Merges) && t.Merges[m].Height <= h {
		m++
	}
	return t.labels(m)
}

// labels applies the first m merges and labels the resulting components.
func (t *Tree) labels(m int) []int {
	uf := newUnionFind(t.N)
	// leaf[c] is some leaf of cluster c, to find its root.
	leaf := make([]int, t.N+len(t.Merges))
	for i := 0; i < t.N; i++ {
		leaf[i] = i
	}
	for i, mg := range t.Merges[:m] {
		uf.union(uf.find(leaf[mg.A]), uf.find(leaf[mg.B]))
		leaf[t.N+i] = leaf[mg.A]
	}
	root := make([]int, t.N)
	for i := range root {
		root[i] = uf.find(i)
	}
	return Relabel(root)
}

// Relabel maps arbitrary cluster ids (one per item) to 0..k-1 ordered by
// cluster size, largest first, ties broken by the smallest member index.
func Relabel(ids []int) []int {
	type group struct{ first, size int }
	groups := map[int]*group{}
	for i, c := range ids {
		g, ok := groups[c]
		if !ok {
			g = &group{first: i}
			groups[c] = g
		}
		g.size++
	}
	order := make([]int, 0, len(groups))
	for c := range groups {
		order = append(order, c)
	}
	slices.SortFunc(order, func(a, b int) int {
		ga, gb := groups[a], groups[b]
		if ga.size != gb.size {
			return gb.size - ga.size
		}
		return ga.first - gb.first
	})
	newID := make(map[int]int, len(order))
	for i, c := range order {
		newID[c] = i
	}
	out := make([]int, len(ids))
	for i, c := range ids {
		out[i] = newID[c]
	}
	return out
}

type unionFind struct{ parent []int }

func newUnionFind(n int) *unionFind {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	return &unionFind{p}
}

func (u *unionFind) find(i int) int {
	for u.parent[i] != i {
		u.parent[i] = u.parent[u.parent[i]]
		i = u.parent[i]
	}
	return i
}

// union joins the sets with roots a and b and returns the new root.
func (u *unionFind) union(a, b int) int {
	if a == b {
		return a
	}
	u.parent[a] = b
	return b
}
