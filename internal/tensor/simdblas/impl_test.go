package simdblas

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

var ref gonum.Implementation

// edgeSizes cut through every blocking edge: 1, partial slivers of 4, 6
// or 12 rows and 8, 16 or 32 columns (7, 8, 9, 12, 13, 31, 33), and, for
// the inner dimension, more than one kc block (257, 300).
var (
	edgeMN = []int{1, 7, 8, 9, 12, 13, 17, 31, 33}
	edgeK  = []int{1, 2, 7, 9, 257}
	alphas = []float64{0, 1, -0.7}
	betas  = []float64{0, 1, 0.3}
)

func trans(t bool) blas.Transpose {
	if t {
		return blas.Trans
	}
	return blas.NoTrans
}

// randMat returns rows×ld values (the padding beyond cols included).
func randMat(rng *rand.Rand, rows, ld int) []float64 {
	x := make([]float64, max(1, rows*ld))
	for i := range x {
		x[i] = rng.Float64()*2 - 1
	}
	return x
}

func to32(x []float64) []float32 {
	y := make([]float32, len(x))
	for i, v := range x {
		y[i] = float32(v)
	}
	return y
}

// gemmCase runs one DGEMM and SGEMM shape against gonum. C starts with
// NaN wherever beta = 0 must overwrite it, and with random values
// elsewhere; padding past n in each row must not change.
func gemmCase(t *testing.T, rng *rand.Rand, ta, tb bool, m, n, k int, alpha, beta float64, pad int) {
	t.Helper()
	ar, ac := m, k
	if ta {
		ar, ac = k, m
	}
	br, bc := k, n
	if tb {
		br, bc = n, k
	}
	lda, ldb, ldc := max(1, ac)+pad, max(1, bc)+pad, n+pad
	a, b, c := randMat(rng, ar, lda), randMat(rng, br, ldb), randMat(rng, m, ldc)
	if beta == 0 {
		for i := 0; i < m; i++ {
			c[i*ldc] = math.NaN()
		}
	}
	name := fmt.Sprintf("%c%c m=%d n=%d k=%d alpha=%g beta=%g pad=%d", trans(ta), trans(tb), m, n, k, alpha, beta, pad)

	got := append([]float64(nil), c...)
	want := append([]float64(nil), c...)
	if Available {
		Implementation{}.Dgemm(trans(ta), trans(tb), m, n, k, alpha, a, lda, b, ldb, beta, got, ldc)
		ref.Dgemm(trans(ta), trans(tb), m, n, k, alpha, a, lda, b, ldb, beta, want, ldc)
		// Summation order differs from gonum's: each entry is a k-term sum
		// of products of values in [-1, 1], so the difference is bounded by
		// about 2k ulps of the largest partial sum (≤ k).
		compare(t, "Dgemm "+name, got, want, m, n, ldc, 4*float64(k+1)*0x1p-52*float64(k+1))
	}

	a32, b32, c32 := to32(a), to32(b), to32(c)
	want32 := append([]float32(nil), c32...)
	ref.Sgemm(trans(ta), trans(tb), m, n, k, float32(alpha), a32, lda, b32, ldb, float32(beta), want32, ldc)
	tol := 4 * float64(k+1) * 0x1p-23 * float64(k+1)
	if Available {
		got32 := append([]float32(nil), c32...)
		Implementation{}.Sgemm(trans(ta), trans(tb), m, n, k, float32(alpha), a32, lda, b32, ldb, float32(beta), got32, ldc)
		compare(t, "Sgemm "+name, widen(got32), widen(want32), m, n, ldc, tol)
	}
	// Each kernel through the driver, whichever Implementation uses.
	for _, kn := range sgemmKernels() {
		got32 := append([]float32(nil), c32...)
		gemm(kn, ta, tb, m, n, k, float32(alpha), a32, lda, b32, ldb, float32(beta), got32, ldc, full)
		compare(t, "Sgemm ("+kn.name+" kernel) "+name, widen(got32), widen(want32), m, n, ldc, tol)
	}
}

// sgemmKernels lists the float32 kernels this CPU runs.
func sgemmKernels() []*kernel[float32] {
	ks := []*kernel[float32]{sgemmGo}
	if Available {
		ks = append(ks, sgemmAVX2)
	}
	if hasAVX512 {
		ks = append(ks, sgemmAVX512)
	}
	return ks
}

func widen(x []float32) []float64 {
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = float64(v)
	}
	return y
}

// compare checks got against want inside the m×n part (tolerance tol,
// NaN only where want has NaN) and bit for bit outside it.
func compare(t *testing.T, name string, got, want []float64, m, n, ldc int, tol float64) {
	t.Helper()
	for i := range got {
		r, j := i/ldc, i%ldc
		g, w := got[i], want[i]
		if r >= m || j >= n {
			if g != w && !(math.IsNaN(g) && math.IsNaN(w)) {
				t.Fatalf("%s: changed (%d, %d) outside C: %v, was %v", name, r, j, g, w)
			}
			continue
		}
		if math.IsNaN(g) != math.IsNaN(w) || math.Abs(g-w) > tol {
			t.Fatalf("%s: C[%d][%d] = %v, gonum %v (tolerance %.2g)", name, r, j, g, w, tol)
		}
	}
}

func TestGemmEdges(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, ta := range []bool{false, true} {
		for _, tb := range []bool{false, true} {
			for _, m := range edgeMN {
				for _, n := range edgeMN {
					for _, k := range edgeK {
						alpha, beta := alphas[rng.IntN(3)], betas[rng.IntN(3)]
						gemmCase(t, rng, ta, tb, m, n, k, alpha, beta, rng.IntN(3))
					}
				}
			}
			for _, alpha := range alphas {
				for _, beta := range betas {
					gemmCase(t, rng, ta, tb, 9, 7, 5, alpha, beta, 1)
				}
			}
		}
	}
}

// TestGemmBlocks covers shapes beyond one mc, nc and kc block, on which
// the work is split over goroutines.
func TestGemmBlocks(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	for _, s := range []struct{ m, n, k int }{
		{145, 4097, 3}, {301, 77, 513}, {6, 2000, 300}, {1000, 5, 40}, {150, 150, 150},
	} {
		for _, ta := range []bool{false, true} {
			for _, tb := range []bool{false, true} {
				gemmCase(t, rng, ta, tb, s.m, s.n, s.k, -0.7, 0.3, 2)
			}
		}
	}
}

// TestWorkersIdentical: the result is the same bit for bit on one
// goroutine and on several.
func TestWorkersIdentical(t *testing.T) {
	if !Available {
		t.Skip("no AVX2/FMA micro-kernel on this CPU or platform")
	}
	rng := rand.New(rand.NewPCG(3, 3))
	m, n, k := 301, 517, 600
	a, b := randMat(rng, m, k), randMat(rng, k, n)
	var first []float64
	for _, w := range []int{1, 2, 3, 7} {
		prev := SetWorkers(w)
		c := make([]float64, m*n)
		Implementation{}.Dgemm(blas.NoTrans, blas.NoTrans, m, n, k, 1, a, k, b, n, 0, c, n)
		s := make([]float64, n*n)
		Implementation{}.Dsyrk(blas.Upper, blas.Trans, n, k, 1, b, n, 0, s, n)
		c = append(c, s...)
		SetWorkers(prev)
		if first == nil {
			first = c
			continue
		}
		for i := range c {
			if c[i] != first[i] {
				t.Fatalf("%d workers: element %d is %v, with 1 worker %v", w, i, c[i], first[i])
			}
		}
	}
}

// syrkCase runs DSYRK and DSYR2K against gonum; the triangle not asked
// for must not change.
func syrkCase(t *testing.T, rng *rand.Rand, ul blas.Uplo, tr bool, n, k int, alpha, beta float64, pad int) {
	t.Helper()
	ar, ac := n, k
	if tr {
		ar, ac = k, n
	}
	lda, ldc := max(1, ac)+pad, n+pad
	a, b, c := randMat(rng, ar, lda), randMat(rng, ar, lda), randMat(rng, n, ldc)
	if beta == 0 {
		for i := 0; i < n; i++ {
			c[i*ldc+i] = math.NaN()
		}
	}
	name := fmt.Sprintf("%c %c n=%d k=%d alpha=%g beta=%g pad=%d", ul, trans(tr), n, k, alpha, beta, pad)
	tol := 8 * float64(k+1) * 0x1p-52 * float64(k+1)

	got := append([]float64(nil), c...)
	want := append([]float64(nil), c...)
	if beta == 0 {
		// gonum v0.17's Dsyrk(Lower, Trans) scales C by beta = 0 instead
		// of storing zeros, so its NaN survives; BLAS says overwrite.
		// Give the reference a clean C; ours must overwrite the NaN.
		for i := 0; i < n; i++ {
			want[i*ldc+i] = 0
		}
	}
	Implementation{}.Dsyrk(ul, trans(tr), n, k, alpha, a, lda, beta, got, ldc)
	ref.Dsyrk(ul, trans(tr), n, k, alpha, a, lda, beta, want, ldc)
	compare(t, "Dsyrk "+name, got, want, n, n, ldc, tol)

	got = append(got[:0], c...)
	want = append(want[:0], c...)
	if beta == 0 {
		for i := 0; i < n; i++ {
			want[i*ldc+i] = 0 // as above, for Dsyr2k
		}
	}
	Implementation{}.Dsyr2k(ul, trans(tr), n, k, alpha, a, lda, b, lda, beta, got, ldc)
	ref.Dsyr2k(ul, trans(tr), n, k, alpha, a, lda, b, lda, beta, want, ldc)
	compare(t, "Dsyr2k "+name, got, want, n, n, ldc, 2*tol)
}

func TestSyrk(t *testing.T) {
	if !Available {
		t.Skip("no AVX2/FMA micro-kernel on this CPU or platform")
	}
	rng := rand.New(rand.NewPCG(4, 4))
	for _, ul := range []blas.Uplo{blas.Upper, blas.Lower} {
		for _, tr := range []bool{false, true} {
			for _, n := range append(edgeMN, 150, 301) {
				for _, k := range edgeK {
					syrkCase(t, rng, ul, tr, n, k, alphas[rng.IntN(3)], betas[rng.IntN(3)], rng.IntN(3))
				}
			}
			for _, alpha := range alphas {
				for _, beta := range betas {
					syrkCase(t, rng, ul, tr, 13, 5, alpha, beta, 1)
				}
			}
		}
	}
}

// TestInvalidArgs: bad arguments reach gonum's checks and panic there.
func TestInvalidArgs(t *testing.T) {
	for name, f := range map[string]func(){
		"lda": func() {
			Implementation{}.Dgemm(blas.NoTrans, blas.NoTrans, 2, 2, 3, 1, make([]float64, 6), 2, make([]float64, 6), 2, 0, make([]float64, 4), 2)
		},
		"shortC": func() {
			Implementation{}.Sgemm(blas.NoTrans, blas.NoTrans, 2, 2, 2, 1, make([]float32, 4), 2, make([]float32, 4), 2, 0, make([]float32, 3), 2)
		},
		"uplo": func() {
			Implementation{}.Dsyrk(blas.All, blas.NoTrans, 2, 2, 1, make([]float64, 4), 2, 0, make([]float64, 4), 2)
		},
		"negK": func() {
			Implementation{}.Dsyr2k(blas.Upper, blas.NoTrans, 2, -1, 1, nil, 1, nil, 1, 0, make([]float64, 4), 2)
		},
		"badTran": func() {
			Implementation{}.Dgemm('x', blas.NoTrans, 1, 1, 1, 1, []float64{1}, 1, []float64{1}, 1, 0, []float64{1}, 1)
		},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

// FuzzGemm draws shapes, transposes, strides and scalars and checks DGEMM,
// SGEMM, DSYRK, DSYR2K and DSYMV against gonum.
func FuzzGemm(f *testing.F) {
	f.Add(uint8(7), uint8(9), uint16(257), uint8(0), uint8(1), uint64(1))
	f.Add(uint8(1), uint8(1), uint16(1), uint8(3), uint8(0), uint64(2))
	f.Add(uint8(150), uint8(40), uint16(300), uint8(2), uint8(2), uint64(3))
	f.Fuzz(func(t *testing.T, m8, n8 uint8, k16 uint16, flags, pad8 uint8, seed uint64) {
		if !Available {
			t.Skip("no AVX2/FMA micro-kernel")
		}
		m, n, k := int(m8)+1, int(n8)+1, int(k16%600)
		rng := rand.New(rand.NewPCG(seed, 5))
		alpha := alphas[int(flags>>2)%3]
		beta := betas[int(flags>>4)%3]
		pad := int(pad8 % 4)
		gemmCase(t, rng, flags&1 != 0, flags&2 != 0, m, n, k, alpha, beta, pad)
		ul := blas.Upper
		if flags&64 != 0 {
			ul = blas.Lower
		}
		syrkCase(t, rng, ul, flags&1 != 0, n, k, alpha, beta, pad)
		// DSYMV on an order that crosses symvMin and the band counts.
		incX, incY := 1+pad, 1+int(flags>>6)%3
		if flags&128 != 0 {
			incX = -incX
		}
		symvCase(t, rng, ul, int(k16%1100)+1, int(k16%1100)+1+pad, incX, incY, alpha, beta)
	})
}
