package transformer

import (
	"context"
	"math"

	"github.com/genlens/genlens/internal/tensor/linalg"
	"github.com/genlens/genlens/internal/tensor/par"
	"github.com/genlens/genlens/internal/tensor/simdblas"
)

// Linear is nn.Linear, y = W·x + b, with W out×in as PyTorch keeps it
// and B nil for a layer without bias. After Pack, where the SGEMM
// kernel runs, W is dropped for its packed form.
type Linear struct {
	In, Out int
	W, B    []float32
	pw      *simdblas.Packed
}

// Pack packs W for simdblas.MulAddPacked when linalg.Sgemm runs the
// SGEMM kernel (the same sums, bit for bit), and then drops W.
func (l *Linear) Pack() {
	if linalg.SgemmKernel() {
		l.pw = simdblas.Pack(l.Out, l.In, l.W, l.In)
		l.W = nil
	}
}

// Scaled returns a copy of l, not packed, with row r of W and of B
// times f(r). l must not be packed yet.
func (l Linear) Scaled(f func(r int) float32) Linear {
	s := Linear{In: l.In, Out: l.Out, W: make([]float32, len(l.W))}
	for r := 0; r < l.Out; r++ {
		g := f(r)
		for j, v := range l.W[r*l.In : (r+1)*l.In] {
			s.W[r*l.In+j] = v * g
		}
	}
	if l.B != nil {
		s.B = make([]float32, len(l.B))
		for r, v := range l.B {
			s.B[r] = v * f(r)
		}
	}
	return s
}

// Mul computes C = W·X + b, or C += W·X + b with add set, for the n
// columns of X (In rows, leading dimension ldx) into C (Out rows,
// leading dimension ldc): nn.Linear applied to every column. Every
// entry starts from the bias (or C's value plus the bias) and adds the
// products in the SGEMM's order. With split > 1 the columns are shared
// among that many goroutines; every entry is summed in the same order
// whatever split is.
func (l *Linear) Mul(x []float32, ldx, n int, c []float32, ldc int, add bool, split int) {
	// A packed weight's product starts every tile from the bias in the
	// kernel (the same sums as from C filled with it, without the pass
	// over C).
	inKernel := !add && l.B != nil && l.pw != nil
	switch {
	case inKernel:
	case !add:
		for r := 0; r < l.Out; r++ {
			row := c[r*ldc:][:n]
			if l.B == nil {
				clear(row)
				continue
			}
			b := l.B[r]
			for j := range row {
				row[j] = b
			}
		}
	case l.B != nil:
		for r := 0; r < l.Out; r++ {
			row := c[r*ldc:][:n]
			b := l.B[r]
			for j := range row {
				row[j] += b
			}
		}
	}
	run := func(n int, x, c []float32) {
		if inKernel {
			simdblas.MulPackedBias(l.pw, n, x, ldx, l.B, c, ldc, false)
			return
		}
		l.mulAdd(n, x, ldx, c, ldc)
	}
	if split <= 1 || n < 2*32 {
		run(n, x, c)
		return
	}
	// Column chunks that are whole micro-tiles (32 wide with AVX-512).
	chunk := (n/split + 31) &^ 31
	parts := (n + chunk - 1) / chunk
	_ = par.For(context.Background(), parts, split, func(_ context.Context, i int) error {
		j0 := i * chunk
		run(min(chunk, n-j0), x[j0:], c[j0:])
		return nil
	})
}

// mulAdd adds W·X to C for the n columns of X (leading dimension ldx)
// and of C (ldc).
func (l *Linear) mulAdd(n int, x []float32, ldx int, c []float32, ldc int) {
	if l.pw != nil {
		simdblas.MulAddPacked(l.pw, n, x, ldx, c, ldc)
		return
	}
	linalg.Sgemm(false, false, l.Out, n, l.In, 1, l.W, l.In, x, ldx, 1, c, ldc)
}

// Norm is nn.LayerNorm over a width of len(G): its weight (gain) G,
// bias B and epsilon.
type Norm struct {
	G, B []float32
	Eps  float32
}

// Cols normalises every column of the len(G)×n matrix x into dst (which
// may be x): (x − mean)/√(var + eps)·g + b over the column, with the
// biased variance and the statistics in float64
// (simdblas.LayerNormCols).
func (nm *Norm) Cols(x []float32, n int, dst []float32) {
	simdblas.LayerNormCols(x, len(nm.G), n, nm.G, nm.B, nm.Eps, dst)
}

// Rows normalises every len(G)-wide row of x into dst (which may be x),
// as Cols does a column. (Its products are not rounded one by one as
// Cols's are: where the compiler fuses them, the last bits may differ
// from Cols's; vit's golden bits pin this form.)
func (nm *Norm) Rows(x []float32, dst []float32) {
	w := len(nm.G)
	for r := 0; r < len(x)/w; r++ {
		row, out := x[r*w:(r+1)*w], dst[r*w:(r+1)*w]
		var s float64
		for _, v := range row {
			s += float64(v)
		}
		mean := s / float64(w)
		var ss float64
		for _, v := range row {
			d := float64(v) - mean
			ss += d * d
		}
		inv := 1 / math.Sqrt(ss/float64(w)+float64(nm.Eps))
		for j, v := range row {
			out[j] = float32((float64(v)-mean)*inv)*nm.G[j] + nm.B[j]
		}
	}
}
