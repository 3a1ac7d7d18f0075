package frechet

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/internal/tensor/par"
)

// CMMD's constants, as Jayasumana et al.'s code fixes them: the bandwidth
// σ of the Gaussian RBF kernel and the factor that makes the numbers
// readable.
const (
	CMMDSigma = 10
	CMMDScale = 1000
)

// cmmdBlock is the number of rows of each side in one GEMM block.
const cmmdBlock = 512

// CMMD returns the CLIP maximum mean discrepancy of Jayasumana et al.
// ("Rethinking FID: Towards a Better Evaluation Metric for Image
// Generation", CVPR 2024) between the rows of x and y, as their code
// (google-research cmmd/distance.py) computes it: the biased
// (V-statistic) MMD² with the kernel k(a, b) = exp(−‖a − b‖²/(2σ²)),
// σ = 10, diagonal pairs included,
//
//	1000 · (mean k(x_i, x_j) + mean k(y_i, y_j) − 2 mean k(x_i, y_j)),
//
// with squared distances as −2 a·b + ‖a‖² + ‖b‖² (not clamped at 0, as
// there) in float64. It is meant for CLIP embeddings (L2-normalised
// projections, where distances are at most 2 and the kernel is nearly
// linear) but is defined on any rows. The kernel matrices are never held:
// tiles of rows go through one GEMM each (the upper triangle only for the
// within-set means), spread over the CPUs, and ctx is checked between
// tiles.
func CMMD(ctx context.Context, x, y *mat.Dense) (float64, error) {
	nx, d := x.Dims()
	ny, dy := y.Dims()
	switch {
	case d != dy:
		return math.NaN(), fmt.Errorf("frechet: CMMD: dimension mismatch: %d and %d", d, dy)
	case nx == 0 || ny == 0:
		return math.NaN(), fmt.Errorf("frechet: CMMD: %d and %d rows: want at least 1 on each side", nx, ny)
	}
	kxx, err := kernelMean(ctx, x, x)
	if err != nil {
		return math.NaN(), err
	}
	kyy, err := kernelMean(ctx, y, y)
	if err != nil {
		return math.NaN(), err
	}
	kxy, err := kernelMean(ctx, x, y)
	if err != nil {
		return math.NaN(), err
	}
	return CMMDScale * (kxx + kyy - 2*kxy), nil
}

// kernelMean returns the mean of the RBF kernel of CMMD over all pairs of
// rows of a and b. When a and b are the same matrix only the tiles on and
// above the diagonal are computed, those above counted twice (the kernel
// is symmetric). Each tile sums into its own slot and the slots are added
// in order, so the result does not depend on the number of goroutines.
func kernelMean(ctx context.Context, a, b *mat.Dense) (float64, error) {
	na, d := a.Dims()
	nb, _ := b.Dims()
	same := a == b
	sa, sb := rowSqNorms(a), rowSqNorms(b)
	const gamma = 1.0 / (2 * CMMDSigma * CMMDSigma)
	type tile struct{ bi, bj int }
	var tiles []tile
	for bi := 0; bi*cmmdBlock < na; bi++ {
		bj := 0
		if same {
			bj = bi
		}
		for ; bj*cmmdBlock < nb; bj++ {
			tiles = append(tiles, tile{bi, bj})
		}
	}
	sums := make([]float64, len(tiles))
	err := par.For(ctx, len(tiles), 0, func(ctx context.Context, t int) error {
		bi, bj := tiles[t].bi, tiles[t].bj
		i0, i1 := bi*cmmdBlock, min((bi+1)*cmmdBlock, na)
		j0, j1 := bj*cmmdBlock, min((bj+1)*cmmdBlock, nb)
		c := mat.NewDense(i1-i0, j1-j0, nil)
		c.Mul(a.Slice(i0, i1, 0, d), b.Slice(j0, j1, 0, d).T())
		var s float64
		for i := i0; i < i1; i++ {
			row := c.RawRowView(i - i0)
			for j, dot := range row {
				u := -2*dot + sa[i]
				u += sb[j0+j]
				s += math.Exp(-gamma * u)
			}
		}
		if same && bj != bi {
			s *= 2
		}
		sums[t] = s
		return nil
	})
	if err != nil {
		return math.NaN(), err
	}
	var total float64
	for _, s := range sums {
		total += s
	}
	return total / (float64(na) * float64(nb)), nil
}

func rowSqNorms(x *mat.Dense) []float64 {
	n, _ := x.Dims()
	out := make([]float64, n)
	for i := range out {
		for _, v := range x.RawRowView(i) {
			out[i] += v * v
		}
	}
	return out
}
