package disentangle

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/internal/tensor/linalg"
	"github.com/genlens/genlens/internal/tensor/membudget"
	"github.com/genlens/genlens/metric/kernel"
)

// MeanEmbeddings holds the plug-in estimates of Gruber, Ziegler & Buettner, Appendix B.2,
// for samples X (n rows) and Y (m rows) under one kernel. All three are
// V-statistics: the diagonal terms k(X_i, X_i) are included.
type MeanEmbeddings struct {
	XX float64 // ||μ_X||² ≈ (1/n²) Σ_ij k(X_i, X_j)
	YY float64 // ||μ_Y||² ≈ (1/m²) Σ_ij k(Y_i, Y_j)
	XY float64 // <μ_X, μ_Y> ≈ (1/nm) Σ_ij k(X_i, Y_j)
}

// Embed returns the mean-embedding estimates of x and y under k.
func Embed(k kernel.Kernel, x, y *mat.Dense) (MeanEmbeddings, error) {
	if x == nil || y == nil || x.IsEmpty() || y.IsEmpty() {
		return MeanEmbeddings{}, fmt.Errorf("disentangle: mean embeddings of an empty sample")
	}
	if _, cx := x.Dims(); cx != y.RawMatrix().Cols {
		return MeanEmbeddings{}, fmt.Errorf("disentangle: samples of dimension %d and %d", cx, y.RawMatrix().Cols)
	}
	nx, ny := x.RawMatrix().Rows, y.RawMatrix().Rows
	if err := membudget.Check("the kernel matrix of the samples", 1, max(nx, ny), max(nx, ny)); err != nil {
		return MeanEmbeddings{}, err
	}
	return MeanEmbeddings{XX: symMean(k.Gram(x)), YY: symMean(k.Gram(y)), XY: denseMean(k.Cross(x, y))}, nil
}

// CMS is the cosine similarity of the mean embeddings,
// <μ_X, μ_Y> / (||μ_X|| ||μ_Y||) (Eq. 3 and 17).
func (e MeanEmbeddings) CMS() float64 { return e.XY / math.Sqrt(e.XX*e.YY) }

// MMD2 is ||μ_X - μ_Y||² = ||μ_X||² + ||μ_Y||² - 2<μ_X, μ_Y> (Eq. 16),
// the biased (V-statistic) MMD² estimate.
func (e MeanEmbeddings) MMD2() float64 { return e.XX + e.YY - 2*e.XY }

func symMean(s mat.Symmetric) float64 {
	n := s.SymmetricDim()
	var diag, off float64
	for i := 0; i < n; i++ {
		diag += s.At(i, i)
		for j := i + 1; j < n; j++ {
			off += s.At(i, j)
		}
	}
	return (diag + 2*off) / float64(n*n)
}

func denseMean(d *mat.Dense) float64 {
	r, c := d.Dims()
	return mat.Sum(d) / float64(r*c)
}

// Comparison is the image-wise and cluster-wise comparison of a generated
// set with the real (test) images, Gruber, Ziegler & Buettner, 2024 Algorithm 1.
type Comparison struct {
	// CMSImage is the CMS of whole images under the RBF kernel
	// exp(-gamma ||x - y||²).
	CMSImage float64
	// CMSClusters[c] is the CMS of the pixels of cluster c alone, under
	// the same kernel restricted to them.
	CMSClusters []float64
	// CMSProduct is the product of CMSClusters, which equals CMSImage when
	// the clusters are independent (Theorem 1).
	CMSProduct float64
	// MMD2 is the image-wise MMD² from the same plug-ins.
	MMD2 float64
}

// Compare estimates the image-wise CMS and MMD² between the real images
// ref and the generated images gen, and the CMS of every cluster of
// pixels, labels[p] being the cluster (0..k-1) of pixel p.
//
// Both sets are split into consecutive mini-batches of batch images (a
// final partial batch is dropped; a set smaller than batch is one batch),
// every statistic is computed on every pair of a real and a generated
// batch, and the pairs are averaged — the authors' code (Appendix B.2
// follows Zaremba et al. 2013). The RBF kernel on a cluster's pixels
// uses the image kernel's gamma, so the image kernel is the product of
// the cluster kernels.
//
// The squared distances are computed per cluster with BLAS and summed
// into the image-wise ones, so the whole comparison costs about one
// cross product of the two sets; the cross distances are held one strip
// of real images at a time (memory batch × generated images, not real ×
// generated).
//
// That product is a minute for ten thousand images of 64×64 RGB on each
// side, so a cancelled ctx stops the work between clusters and between
// strips (a strip is a batch of real images against all generated ones),
// and Compare returns ctx's error.
func Compare(ctx context.Context, ref, gen *mat.Dense, g Grid, labels []int, gamma float64, batch int) (Comparison, error) {
	if err := g.check(ref, "real images"); err != nil {
		return Comparison{}, err
	}
	if err := g.check(gen, "generated images"); err != nil {
		return Comparison{}, err
	}
	if !(gamma > 0) || math.IsInf(gamma, 0) {
		return Comparison{}, fmt.Errorf("disentangle: gamma %g: want a positive number", gamma)
	}
	if batch < 1 {
		return Comparison{}, fmt.Errorf("disentangle: CMS batch size %d: want at least 1", batch)
	}
	k, err := checkLabels(labels, g.Pixels())
	if err != nil {
		return Comparison{}, err
	}
	nx, bx := batches(ref, batch)
	ny, by := batches(gen, batch)
	rx, ry := nx*bx, ny*by // rows used

	members := make([][]int, k)
	for p, c := range labels {
		members[c] = append(members[c], p)
	}
	// Within-batch parts: squared distances of each set's batches per
	// cluster, summed over clusters into the image-wise ones (the image
	// kernel is the product of the cluster kernels).
	xcs := make([]*mat.Dense, k)
	ycs := make([]*mat.Dense, k)
	kxC := make([][]float64, k)
	kyC := make([][]float64, k)
	imgX := newBlocks(nx, bx)
	imgY := newBlocks(ny, by)
	for c := 0; c < k; c++ {
		if err := ctx.Err(); err != nil {
			return Comparison{}, err
		}
		xcs[c] = columns(ref, rx, members[c], g.C)
		ycs[c] = columns(gen, ry, members[c], g.C)
		dx := selfDistances(xcs[c], nx, bx)
		dy := selfDistances(ycs[c], ny, by)
		imgX.add(dx)
		imgY.add(dy)
		kxC[c], kyC[c] = dx.expMeans(gamma), dy.expMeans(gamma)
	}
	kxImg, kyImg := imgX.expMeans(gamma), imgY.expMeans(gamma)

	// Cross parts, one strip of real images (one batch) against all the
	// generated ones at a time: every (real batch, generated batch) pair
	// needs its block of kernel values, but never more than a strip is
	// held, so memory grows with the generated set, not with the product
	// of the two set sizes.
	xyC := make([][]float64, k)
	for c := range xyC {
		xyC[c] = make([]float64, nx*ny)
	}
	xyImg := make([]float64, nx*ny)
	strip := mat.NewDense(bx, ry, nil)
	for a := 0; a < nx; a++ {
		strip.Zero()
		for c := 0; c < k; c++ {
			if err := ctx.Err(); err != nil {
				return Comparison{}, err
			}
			_, w := xcs[c].Dims()
			d := crossDistances(xcs[c].Slice(a*bx, (a+1)*bx, 0, w).(*mat.Dense), ycs[c])
			strip.Add(strip, d)
			for b := 0; b < ny; b++ {
				xyC[c][a*ny+b] = expMean(d.Slice(0, bx, b*by, (b+1)*by).(*mat.Dense), gamma)
			}
		}
		for b := 0; b < ny; b++ {
			xyImg[a*ny+b] = expMean(strip.Slice(0, bx, b*by, (b+1)*by).(*mat.Dense), gamma)
		}
	}

	out := Comparison{CMSClusters: make([]float64, k), CMSProduct: 1}
	for c := 0; c < k; c++ {
		out.CMSClusters[c] = averageCMS(pairEmbeddings(kxC[c], kyC[c], xyC[c]))
		out.CMSProduct *= out.CMSClusters[c]
	}
	e := pairEmbeddings(kxImg, kyImg, xyImg)
	out.CMSImage = averageCMS(e)
	for _, pe := range e {
		out.MMD2 += pe.MMD2()
	}
	out.MMD2 /= float64(len(e))
	return out, nil
}

// checkLabels checks that labels assigns each of P pixels a cluster in
// 0..k-1 with no cluster empty, and returns k.
func checkLabels(labels []int, P int) (int, error) {
	if len(labels) != P {
		return 0, fmt.Errorf("disentangle: %d cluster labels for %d pixels", len(labels), P)
	}
	k := 0
	for p, c := range labels {
		if c < 0 {
			return 0, fmt.Errorf("disentangle: pixel %d has negative cluster label %d", p, c)
		}
		k = max(k, c+1)
	}
	seen := make([]bool, k)
	for _, c := range labels {
		seen[c] = true
	}
	for c, ok := range seen {
		if !ok {
			return 0, fmt.Errorf("disentangle: cluster %d of 0..%d has no pixels", c, k-1)
		}
	}
	return k, nil
}

// batches returns the number and size of the mini-batches of x.
func batches(x *mat.Dense, batch int) (n, size int) {
	r, _ := x.Dims()
	if r < batch {
		return 1, r
	}
	return r / batch, batch
}

// columns copies the channels of the given pixels from the first rows
// rows of x into a contiguous matrix.
func columns(x *mat.Dense, rows int, pixels []int, C int) *mat.Dense {
	xr := x.RawMatrix()
	out := mat.NewDense(rows, len(pixels)*C, nil)
	or := out.RawMatrix()
	for i := 0; i < rows; i++ {
		src := xr.Data[i*xr.Stride:]
		dst := or.Data[i*or.Stride:]
		for k, p := range pixels {
			copy(dst[k*C:k*C+C], src[p*C:p*C+C])
		}
	}
	return out
}

// blocks holds the squared distances within each mini-batch of a set.
type blocks []*mat.SymDense

func newBlocks(n, size int) blocks {
	b := make(blocks, n)
	for i := range b {
		b[i] = mat.NewSymDense(size, nil)
	}
	return b
}

func (b blocks) add(o blocks) {
	for i := range b {
		b[i].AddSym(b[i], o[i])
	}
}

func selfDistances(x *mat.Dense, n, size int) blocks {
	_, c := x.Dims()
	out := make(blocks, n)
	for i := range out {
		xb := x.Slice(i*size, (i+1)*size, 0, c).(*mat.Dense)
		g := linalg.Gram(xb)
		linalg.SqDistFromGram(g)
		out[i] = g
	}
	return out
}

func crossDistances(x, y *mat.Dense) *mat.Dense {
	c := linalg.Cross(x, y)
	sx, sy := linalg.RowSqNorms(x), linalg.RowSqNorms(y)
	raw := c.RawMatrix()
	for i := 0; i < raw.Rows; i++ {
		row := raw.Data[i*raw.Stride : i*raw.Stride+raw.Cols]
		for j, v := range row {
			row[j] = max(0, sx[i]+sy[j]-2*v)
		}
	}
	return c
}

// expMeans returns the mean of exp(-gamma d²) over each block, diagonal
// included.
func (bl blocks) expMeans(gamma float64) []float64 {
	out := make([]float64, len(bl))
	for i, d := range bl {
		out[i] = expMeanSym(d, gamma)
	}
	return out
}

// pairEmbeddings returns the mean embeddings of every pair (real batch a,
// generated batch b), in order a·ny + b, from the within-batch means kx
// and ky and the cross means xy.
func pairEmbeddings(kx, ky, xy []float64) []MeanEmbeddings {
	out := make([]MeanEmbeddings, 0, len(xy))
	for a := range kx {
		for b := range ky {
			out = append(out, MeanEmbeddings{XX: kx[a], YY: ky[b], XY: xy[a*len(ky)+b]})
		}
	}
	return out
}

func expMeanSym(d *mat.SymDense, gamma float64) float64 {
	raw := d.RawSymmetric()
	n := raw.N
	var off float64
	for i := 0; i < n; i++ {
		for _, v := range raw.Data[i*raw.Stride+i+1 : i*raw.Stride+n] {
			off += math.Exp(-gamma * v)
		}
	}
	return (float64(n) + 2*off) / float64(n*n)
}

func expMean(d *mat.Dense, gamma float64) float64 {
	raw := d.RawMatrix()
	var s float64
	for i := 0; i < raw.Rows; i++ {
		for _, v := range raw.Data[i*raw.Stride : i*raw.Stride+raw.Cols] {
			s += math.Exp(-gamma * v)
		}
	}
	return s / float64(raw.Rows*raw.Cols)
}

func averageCMS(e []MeanEmbeddings) float64 {
	var s float64
	for _, x := range e {
		s += x.CMS()
	}
	return s / float64(len(e))
}

// CleanCMS is the product CMS above which MainCluster names no cluster.
const CleanCMS = 0.99

// MainCluster returns the cluster that contributes most of the
// image-wise dissimilarity and its share of it: by Theorem 1,
// -log CMS(image) = Σ_c -log CMS(cluster c), so cluster c's share is
// log CMS_c / log CMS_product. It returns (-1, NaN) for a clean set, one
// whose product CMS is above CleanCMS: held-out real images score about
// 0.99 against their training set, and naming a "main cluster" of such
// a set would blame a region for sampling noise.
func (c Comparison) MainCluster() (cluster int, share float64) {
	var total float64
	best := 0
	for i, v := range c.CMSClusters {
		total += -math.Log(v)
		if -math.Log(v) > -math.Log(c.CMSClusters[best]) {
			best = i
		}
	}
	if !(total > -math.Log(CleanCMS)) {
		return -1, math.NaN()
	}
	return best, -math.Log(c.CMSClusters[best]) / total
}
