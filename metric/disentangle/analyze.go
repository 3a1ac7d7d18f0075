package disentangle

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/internal/tensor/membudget"
	"github.com/genlens/genlens/metric/cluster"
	"github.com/genlens/genlens/metric/kernel"
)

// Distance says how pixels are compared when they are clustered.
type Distance int

const (
	// RowDistance is the Euclidean distance between the pixels' rows of
	// the CKA matrix, as the authors' code clusters (scipy pdist on the
	// matrix): two pixels are close when they depend alike on all others.
	RowDistance Distance = iota
	// OneMinusCKA is 1 - CKA(p, q), the direct dissimilarity.
	OneMinusCKA
)

var distanceNames = []string{"rows", "one-minus-cka"}

func (d Distance) String() string {
	if d < 0 || int(d) >= len(distanceNames) {
		return fmt.Sprintf("Distance(%d)", int(d))
	}
	return distanceNames[d]
}

// ParseDistance parses "rows" or "one-minus-cka".
func ParseDistance(s string) (Distance, error) {
	i := slices.Index(distanceNames, strings.ToLower(strings.TrimSpace(s)))
	if i < 0 {
		return 0, fmt.Errorf("disentangle: unknown distance %q (want %s)", s, strings.Join(distanceNames, " or "))
	}
	return Distance(i), nil
}

// ErrIdenticalImages is returned (wrapped) by Analyze when most training
// images used for CKA are identical, so the median rule cannot set gamma.
var ErrIdenticalImages = errors.New("disentangle: the training images are (mostly) identical")

// Defaults of Options, from Gruber, Ziegler & Buettner, 2024 (Appendix B.2 and C, the authors'
// code for CelebA).
const (
	DefaultClusters  = 5
	DefaultCKABatch  = 100
	DefaultCKAImages = 1000
	DefaultCMSBatch  = 150
)

// Options configure Analyze. The zero value means the defaults.
type Options struct {
	// Clusters is the number of pixel clusters (default 5), used unless
	// Threshold is set.
	Clusters int
	// Threshold, when positive, cuts the cluster tree at this height
	// instead of into a fixed number of clusters.
	Threshold float64
	Linkage   cluster.Linkage // default Average
	Distance  Distance        // default RowDistance

	// CKAImages training images (default 1000; all if fewer) are used for
	// the pixel CKA matrix in batches of CKABatch (default 100): the first
	// ones in order, or a random subset drawn with Seed when Shuffle is set.
	CKAImages int
	CKABatch  int
	Shuffle   bool
	Seed      uint64

	// CMSBatch is the mini-batch size of the CMS and MMD² estimates
	// (default 150).
	CMSBatch int

	// Gamma is the RBF parameter of the image kernel and of every pixel
	// and cluster kernel; 0 means 1 / the median squared distance between
	// the training images used for CKA (diagonal zeros included).
	Gamma float64

	// MaxMemory bounds the bytes the pixel-by-pixel matrices may take
	// (see MemoryBytes); Analyze refuses larger images with a *SizeError
	// before allocating anything. 0 means the process's matrix memory
	// budget (package membudget).
	MaxMemory int64

	// Progress, when not nil, is called after each CKA batch.
	Progress func(done, total int)
}

// MemoryBytes returns about how many bytes Analyze needs for images of
// the given number of pixels and CKA batches of batch images: four P×P
// matrices (the CKA matrix, the distances between its rows and their
// intermediate, the clustering's working copy) and the P × batch(batch+1)/2
// packed pixel kernels.
func MemoryBytes(pixels, batch int) int64 {
	p, b := int64(pixels), int64(batch)
	return 8 * (4*p*p + p*b*(b+1)/2)
}

// SizeError reports images too large for the pixel-by-pixel matrices.
// Over the process's budget it wraps the *membudget.Error, whose setting
// it names.
type SizeError struct {
	Grid        Grid
	Need, Limit int64 // bytes
	Err         error // the *membudget.Error, when the limit is the budget
}

func (e *SizeError) Error() string { return e.Render(func(f string) string { return f }) }

// Render renders the message, spelling the budget's request field with
// spell (package internal/fields).
func (e *SizeError) Render(spell func(field string) string) string {
	P := int64(e.Grid.Pixels())
	limit := "the limit of " + bytesString(e.Limit)
	if e.Err != nil {
		limit = fmt.Sprintf("the matrix memory budget of %s (%s, MiB)", bytesString(e.Limit), spell(membudget.Field))
	}
	return fmt.Sprintf("disentangle: images of %dx%d pixels need about %s for the pixel-by-pixel CKA matrices (one %dx%d matrix is %s), more than %s: downsample the images (64x64 pixels need about %s)",
		e.Grid.H, e.Grid.W, bytesString(e.Need), P, P, bytesString(8*P*P), limit, bytesString(MemoryBytes(64*64, DefaultCKABatch)))
}

// Unwrap returns the *membudget.Error, if any.
func (e *SizeError) Unwrap() error { return e.Err }

func bytesString(b int64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.1f GB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.0f MB", float64(b)/(1<<20))
	}
	return fmt.Sprintf("%d kB", (b+1023)/1024)
}

// checkMatrixSize returns a *SizeError when images of grid g
// need more than limit bytes (0: the matrix memory budget).
func checkMatrixSize(g Grid, batch int, limit int64) error {
	need := MemoryBytes(g.Pixels(), batch)
	if limit <= 0 {
		P := g.Pixels()
		if err := membudget.CheckBytes("the pixel-by-pixel CKA matrices", P, P, need); err != nil {
			return &SizeError{Grid: g, Need: need, Limit: err.(*membudget.Error).Limit, Err: err}
		}
		return nil
	}
	if need > limit {
		return &SizeError{Grid: g, Need: need, Limit: limit}
	}
	return nil
}

func (o Options) withDefaults() Options {
	if o.Clusters == 0 {
		o.Clusters = DefaultClusters
	}
	if o.CKAImages == 0 {
		o.CKAImages = DefaultCKAImages
	}
	if o.CKABatch == 0 {
		o.CKABatch = DefaultCKABatch
	}
	if o.CMSBatch == 0 {
		o.CMSBatch = DefaultCMSBatch
	}
	return o
}

// Result is the output of Analyze.
type Result struct {
	Grid  Grid
	Gamma float64
	// CKAImages is the number of training images the CKA matrix used
	// (whole batches only).
	CKAImages int
	// CKA is the P×P pixel CKA matrix, pixels in row-major order.
	CKA *mat.SymDense
	// ConstantPixels counts the pixels that never varied in a CKA batch.
	ConstantPixels int
	Tree           *cluster.Tree
	// Labels[p] is the cluster of pixel p, 0 the largest cluster.
	Labels []int
	Sizes  []int
	// Within[c] is the mean CKA between distinct pixels of cluster c (NaN
	// for a one-pixel cluster); Between[a][b] the mean CKA between pixels
	// of clusters a and b, with Between[c][c] = Within[c].
	Within  []float64
	Between [][]float64
	// Sets holds the comparison of each generated set with the test set.
	Sets []Comparison
}

// Analyze runs Gruber, Ziegler & Buettner's Algorithm 1: the pixel CKA matrix on the
// training images, hierarchical clustering of the pixels, and for every
// generated set the image-wise CMS and MMD² against the test images with
// the CMS of every cluster and their product. Images are rows laid out as
// g describes, already scaled (genlens scales to [-1, 1] like the
// authors).
//
// Images whose pixel-by-pixel matrices would take more than
// opt.MaxMemory are refused with a *SizeError before any work. Analyze
// returns ctx's error soon after ctx is done.
func Analyze(ctx context.Context, train, test *mat.Dense, generated []*mat.Dense, g Grid, opt Options) (*Result, error) {
	opt = opt.withDefaults()
	if err := g.check(train, "training images"); err != nil {
		return nil, err
	}
	if err := g.check(test, "test images"); err != nil {
		return nil, err
	}
	for i, x := range generated {
		if err := g.check(x, fmt.Sprintf("generated set %d", i+1)); err != nil {
			return nil, err
		}
	}
	switch {
	case opt.Clusters < 1:
		return nil, fmt.Errorf("disentangle: %d clusters: want at least 1", opt.Clusters)
	case opt.Threshold < 0 || math.IsNaN(opt.Threshold) || math.IsInf(opt.Threshold, 0):
		return nil, fmt.Errorf("disentangle: cluster threshold %g: want a positive number", opt.Threshold)
	case opt.Clusters > g.Pixels() && opt.Threshold == 0:
		return nil, fmt.Errorf("disentangle: %d clusters for %d pixels", opt.Clusters, g.Pixels())
	case opt.CKAImages < 2:
		return nil, fmt.Errorf("disentangle: %d CKA images: want at least 2", opt.CKAImages)
	case opt.CKABatch < 2:
		return nil, fmt.Errorf("disentangle: CKA batch size %d: want at least 2", opt.CKABatch)
	case opt.CMSBatch < 1:
		return nil, fmt.Errorf("disentangle: CMS batch size %d: want at least 1", opt.CMSBatch)
	case opt.Gamma < 0 || math.IsNaN(opt.Gamma) || math.IsInf(opt.Gamma, 0):
		return nil, fmt.Errorf("disentangle: gamma %g: want a positive number (0 for the median rule)", opt.Gamma)
	case opt.Distance != RowDistance && opt.Distance != OneMinusCKA:
		return nil, fmt.Errorf("disentangle: unknown distance %v", opt.Distance)
	}

	if n, _ := train.Dims(); n < 2 {
		return nil, fmt.Errorf("disentangle: %d training image: CKA needs at least 2", n)
	}
	ntrain, _ := train.Dims()
	if err := checkMatrixSize(g, min(opt.CKABatch, opt.CKAImages, ntrain), opt.MaxMemory); err != nil {
		return nil, err
	}
	sub := TrainingSubset(train, opt.CKAImages, opt.CKABatch, opt.Shuffle, opt.Seed)
	n, _ := sub.Dims()
	batch := min(opt.CKABatch, n)
	res := &Result{Grid: g, Gamma: opt.Gamma, CKAImages: n / batch * batch}
	if res.Gamma == 0 {
		// The median rule's Gram matrix and pairwise distances.
		if err := membudget.Check("the distances between the CKA images", 2, n, n); err != nil {
			return nil, err
		}
		med := kernel.MedianSqDist(sub)
		if !(med > 0) {
			return nil, fmt.Errorf("%w: median squared distance %g; give gamma as a number", ErrIdenticalImages, med)
		}
		res.Gamma = 1 / med
	}
	cka, err := PixelCKA(ctx, sub, g, res.Gamma, batch, opt.Progress)
	if err != nil {
		return nil, err
	}
	res.CKA = cka
	for p := 0; p < g.Pixels(); p++ {
		if cka.At(p, p) == 0 {
			res.ConstantPixels++
		}
	}
	dist, err := PixelDistances(ctx, cka, opt.Distance)
	if err != nil {
		return nil, err
	}
	res.Tree, err = cluster.Agglomerate(dist, opt.Linkage)
	if err != nil {
		return nil, err
	}
	if opt.Threshold > 0 {
		res.Labels = res.Tree.CutHeight(opt.Threshold)
	} else if res.Labels, err = res.Tree.CutK(opt.Clusters); err != nil {
		return nil, err
	}
	res.Within, res.Between, res.Sizes = BlockMeans(cka, res.Labels)
	for _, x := range generated {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		c, err := Compare(ctx, test, x, g, res.Labels, res.Gamma, opt.CMSBatch)
		if err != nil {
			return nil, err
		}
		res.Sets = append(res.Sets, c)
	}
	return res, nil
}

// TrainingSubset returns the training images used for the CKA matrix:
// the first want rows of train, or, with shuffle, want rows drawn without
// replacement by a generator seeded with seed; then only whole batches of
// batch rows are kept (all rows when there are fewer than one batch). The
// result shares memory with train when no shuffling is needed.
func TrainingSubset(train *mat.Dense, want, batch int, shuffle bool, seed uint64) *mat.Dense {
	n, d := train.Dims()
	want = min(want, n)
	var sub *mat.Dense
	if shuffle {
		r := rand.New(rand.NewPCG(seed, 0x6a09e667f3bcc908))
		idx := r.Perm(n)[:want]
		sub = mat.NewDense(want, d, nil)
		for i, j := range idx {
			sub.SetRow(i, train.RawRowView(j))
		}
	} else {
		sub = train.Slice(0, want, 0, d).(*mat.Dense)
	}
	if batch > 0 && want > batch {
		sub = sub.Slice(0, want/batch*batch, 0, d).(*mat.Dense)
	}
	return sub
}

// PixelDistances turns a pixel CKA matrix into the distances the pixels
// are clustered by.
func PixelDistances(ctx context.Context, cka *mat.SymDense, d Distance) (*mat.SymDense, error) {
	if d == RowDistance {
		return RowDistances(ctx, cka)
	}
	n := cka.SymmetricDim()
	out := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			// Clamped: rounding can push a CKA of 1 just above it.
			out.SetSym(i, j, max(0, 1-cka.At(i, j)))
		}
	}
	return out, ctx.Err()
}

// BlockMeans returns the mean CKA within each cluster (between distinct
// pixels; NaN for a one-pixel cluster) and between each pair of clusters
// (with the within means on the diagonal), and the cluster sizes.
func BlockMeans(cka mat.Symmetric, labels []int) (within []float64, between [][]float64, sizes []int) {
	k := 0
	for _, c := range labels {
		k = max(k, c+1)
	}
	sizes = make([]int, k)
	for _, c := range labels {
		sizes[c]++
	}
	sum := make([][]float64, k)
	for i := range sum {
		sum[i] = make([]float64, k)
	}
	n := len(labels)
	for p := 0; p < n; p++ {
		for q := p + 1; q < n; q++ {
			a, b := labels[p], labels[q]
			v := cka.At(p, q)
			sum[a][b] += v
			if a != b {
				sum[b][a] += v
			}
		}
	}
	within = make([]float64, k)
	between = make([][]float64, k)
	for a := 0; a < k; a++ {
		between[a] = make([]float64, k)
		for b := 0; b < k; b++ {
			if a == b {
				pairs := float64(sizes[a] * (sizes[a] - 1) / 2)
				within[a] = sum[a][a] / pairs // NaN for 0/0
				if pairs == 0 {
					within[a] = math.NaN()
				}
				between[a][a] = within[a]
				continue
			}
			between[a][b] = sum[a][b] / float64(sizes[a]*sizes[b])
		}
	}
	return within, between, sizes
}

// MaxBetween returns the largest mean CKA between cluster c and another
// cluster (NaN with a single cluster).
func (r *Result) MaxBetween(c int) float64 {
	m := math.NaN()
	for d, v := range r.Between[c] {
		if d != c && !(v <= m) {
			m = v
		}
	}
	return m
}

// IncoherentClusters returns the clusters whose pixels are no more alike
// among themselves (mean CKA within) than with the pixels of some other
// cluster. Theorem 1 needs clusters that are independent of each other;
// such a cluster is not a region of its own, and its CMS is no separate
// cause of the image-wise one. It happens on real faces, whose pixels
// depend on each other across the whole image.
func (r *Result) IncoherentClusters() []int {
	var out []int
	for c, w := range r.Within {
		if b := r.MaxBetween(c); !math.IsNaN(w) && w <= b {
			out = append(out, c)
		}
	}
	return out
}
