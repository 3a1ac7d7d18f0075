package simdblas

import (
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/blas"
)

// dotAxpy returns Σ a[j]·x[j] and adds s·a[j] to y[j]; x and y are at
// least as long as a.
func dotAxpy(a, x, y []float64, s float64) float64 {
	n := len(a) &^ 7
	var d float64
	if n > 0 {
		d = dotAxpyAVX(n, &a[0], &x[0], &y[0], s)
	}
	for j := n; j < len(a); j++ {
		d += a[j] * x[j]
		y[j] += s * a[j]
	}
	return d
}

// symvChunks is the number of row bands DSYMV splits the triangle into,
// fixed by n alone so that the result does not depend on the number of
// workers: each band sums into its own vector and the vectors are added
// in band order.
func symvChunks(n int) int {
	switch {
	case n < 256:
		return 1
	case n < 1024:
		return 2
	}
	return 4
}

// symvBufs holds the scratch of Dsymv (x gathered, one partial y per
// band): the tridiagonalisation of a d×d matrix calls it d times.
var symvBufs sync.Pool

// symvMin is the order below which Dsymv stays with gonum.
const symvMin = 64

// Dsymv computes y = alpha·A·x + beta·y for the symmetric n×n A stored in
// its ul triangle. Each row of the triangle is read once, for its dot
// product with x and for its reflection's contribution to y (DSYMV is
// bound by memory bandwidth: the tridiagonalisation of LAPACK's dsytrd
// spends half its flops here), in bands over goroutines.
func (impl Implementation) Dsymv(ul blas.Uplo, n int, alpha float64, a []float64, lda int, x []float64, incX int, beta float64, y []float64, incY int) {
	ok := (ul == blas.Upper || ul == blas.Lower) && n >= symvMin && lda >= n && incX != 0 && incY != 0 &&
		len(a) >= lda*(n-1)+n && len(x) > (n-1)*abs(incX) && len(y) > (n-1)*abs(incY)
	if !ok || !Available || alpha == 0 {
		impl.Implementation.Dsymv(ul, n, alpha, a, lda, x, incX, beta, y, incY)
		return
	}
	nc := symvChunks(n)
	bp, _ := symvBufs.Get().(*[]float64)
	if bp == nil {
		bp = new([]float64)
	}
	defer symvBufs.Put(bp)
	if cap(*bp) < (nc+1)*n {
		*bp = make([]float64, (nc+1)*n)
	}
	buf := (*bp)[:(nc+1)*n]
	xc, parts := buf[:n], buf[n:]
	clear(parts)
	kx := 0
	if incX < 0 {
		kx = -(n - 1) * incX
	}
	for i := range xc {
		xc[i] = x[kx+i*incX]
	}
	// Bands of rows of about equal area of the triangle.
	bounds := make([]int, nc+1)
	for c := 1; c <= nc; c++ {
		bounds[c] = bandEdge(n, c, nc, ul == blas.Upper)
	}
	var next atomic.Int64
	parallel(min(nWorkers(), nc), func(_, _ int) {
		for {
			c := int(next.Add(1) - 1)
			if c >= nc {
				return
			}
			t := parts[c*n : (c+1)*n]
			for i := bounds[c]; i < bounds[c+1]; i++ {
				xi := xc[i]
				if ul == blas.Upper {
					row := a[i*lda+i : i*lda+n]
					t[i] += row[0]*xi + dotAxpy(row[1:], xc[i+1:], t[i+1:], xi)
				} else {
					row := a[i*lda : i*lda+i+1]
					t[i] += row[i]*xi + dotAxpy(row[:i], xc[:i], t[:i], xi)
				}
			}
		}
	})
	ky := 0
	if incY < 0 {
		ky = -(n - 1) * incY
	}
	for i := 0; i < n; i++ {
		s := parts[i]
		for c := 1; c < nc; c++ {
			s += parts[c*n+i]
		}
		p := ky + i*incY
		if beta == 0 {
			y[p] = alpha * s
		} else {
			y[p] = beta*y[p] + alpha*s
		}
	}
}

// bandEdge returns the first row of band c of nc when the rows of an n×n
// triangle are cut into bands of equal area (upper: row i holds n-i
// entries; lower: i+1).
func bandEdge(n, c, nc int, upper bool) int {
	if c == nc {
		return n
	}
	total := n * (n + 1) / 2
	want := total * c / nc
	area := 0
	for i := 0; i < n; i++ {
		if upper {
			area += n - i
		} else {
			area += i + 1
		}
		if area >= want {
			return i + 1
		}
	}
	return n
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
