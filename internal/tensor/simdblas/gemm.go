package simdblas

import (
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"
)

// elem is the element type of a kernel: float32 or float64.
type elem interface{ float32 | float64 }

// kernel describes one register-blocked micro-kernel and the cache
// blocking around it, in the manner of Goto and van de Geijn, "Anatomy of
// High-Performance Matrix Multiplication" (ACM TOMS, 2008) and of Van Zee
// and van de Geijn, "BLIS: A Framework for Rapidly Instantiating BLAS
// Functionality" (ACM TOMS, 2015): a kc×nc panel of B is
// packed once and stays in L3 while mc×kc blocks of A, packed into L2,
// stream past it; the micro-kernel reads an mr-row sliver of A and an
// nr-column sliver of B from L1 and keeps the mr×nr tile of C in
// registers for all kc steps.
type kernel[T elem] struct {
	mr, nr     int
	kc, mc, nc int
	// micro adds alpha·A·B to the mr×nr tile at c and, with relu set,
	// clamps the tile at zero afterwards (NaN stays NaN).
	micro func(k int, a, b, c *T, ldc int, alpha T, relu bool)
	// microBias, where the kernel has it, sets the tile to bias[r] +
	// A·B on row r without reading it (alpha = 1), clamping with relu.
	microBias func(k int, a, b, c *T, ldc int, bias *T, relu bool)
	// microEdge, where the kernel has it, is micro (bias nil) or
	// microBias for a tile of which only rows × cols lie inside C: it
	// touches nothing outside them, so edge tiles need no buffer.
	microEdge func(k int, a, b, c *T, ldc int, bias *T, rows, cols int, alpha T, relu bool)
	// packB, where the kernel has it, packs one sliver of B (not
	// transposed): kc rows of cols <= nr values, ldb apart.
	packB func(dst, src *T, ldb, kc, cols int)
	name  string
	// free holds the scratch of goroutines that finished a product. It
	// is a plain list, not a sync.Pool: a pool is emptied by the garbage
	// collector, and the forward passes, which allocate, would then
	// allocate and fault in megabytes of panel again after every cycle.
	// It holds at most one set per goroutine that ran a product at once.
	mu   sync.Mutex
	free []*packBufs[T]
}

// packBufs is the scratch of one goroutine: a packed block of A, a packed
// panel of B (the caller's), and a tile for edges.
type packBufs[T elem] struct {
	a, b []T
	tile []T // mr×nr
}

func (kn *kernel[T]) get() *packBufs[T] {
	kn.mu.Lock()
	if n := len(kn.free); n > 0 {
		p := kn.free[n-1]
		kn.free = kn.free[:n-1]
		kn.mu.Unlock()
		return p
	}
	kn.mu.Unlock()
	return &packBufs[T]{tile: make([]T, kn.mr*kn.nr)}
}

// put returns scratch taken by get.
func (kn *kernel[T]) put(p *packBufs[T]) {
	kn.mu.Lock()
	kn.free = append(kn.free, p)
	kn.mu.Unlock()
}

// Blocking: kc steps of a 6×8 float64 sliver pair are 28 KB (L1 is 32-48
// KB on AVX2 machines), an mc×kc block of A 288 KB (L2 0.5-2 MB), a
// kc×nc panel of B 8 MB (shared L3). The float32 kernel has twice the
// columns and half the bytes per value.
var (
	dgemmK = &kernel[float64]{mr: 6, nr: 8, kc: 256, mc: 144, nc: 4096, micro: dgemm6x8, name: "avx2"}

	sgemmAVX2 = &kernel[float32]{mr: 6, nr: 16, kc: 256, mc: 144, nc: 4096, micro: sgemmKernel6x16, name: "avx2"}
	// The AVX-512 kernel's 12×32 tile holds 24 of the 32 ZMM registers;
	// a kc-step sliver of B is 32 KB, which stays in L1 (48 KB on the
	// CPUs that have it) while slivers of A (12 KB) stream past it.
	sgemmAVX512 = &kernel[float32]{mr: 12, nr: 32, kc: 256, mc: 144, nc: 4096, micro: sgemmKernel12x32, microBias: sgemmKernel12x32Bias, microEdge: sgemmEdge12x32, packB: packB32, name: "avx512"}
	// sgemmGo is the same blocking around a micro-kernel in Go, for CPUs
	// without AVX2 and for the tests of the driver's edges.
	sgemmGo = &kernel[float32]{mr: 4, nr: 8, kc: 256, mc: 144, nc: 4096, micro: goMicro[float32](4, 8), name: "go"}

	// sgemmK is the float32 kernel in use: the widest the CPU runs. The
	// tests set it to each in turn.
	sgemmK = bestSgemm()
)

func dgemm6x8(k int, a, b, c *float64, ldc int, alpha float64, _ bool) {
	dgemmKernel6x8(k, a, b, c, ldc, alpha)
}

// SgemmKernel names the float32 micro-kernel in use: "avx512", "avx2" or
// "go".
func SgemmKernel() string { return sgemmK.name }

func bestSgemm() *kernel[float32] {
	switch {
	case hasAVX512:
		return sgemmAVX512
	case Available:
		return sgemmAVX2
	}
	return sgemmGo
}

// goMicro returns a micro-kernel in Go for mr×nr tiles.
func goMicro[T elem](mr, nr int) func(k int, a, b, c *T, ldc int, alpha T, relu bool) {
	return func(k int, a, b, c *T, ldc int, alpha T, relu bool) {
		as := unsafe.Slice(a, k*mr)
		bs := unsafe.Slice(b, k*nr)
		cs := unsafe.Slice(c, (mr-1)*ldc+nr)
		acc := make([]T, mr*nr)
		for p := range k {
			bp := bs[p*nr : (p+1)*nr]
			for r, av := range as[p*mr : (p+1)*mr] {
				row := acc[r*nr : (r+1)*nr]
				for j, bv := range bp {
					row[j] += av * bv
				}
			}
		}
		for r := range mr {
			row := cs[r*ldc : r*ldc+nr]
			for j, v := range acc[r*nr : (r+1)*nr] {
				x := row[j] + alpha*v
				if relu && x < 0 {
					x = 0
				}
				row[j] = x
			}
		}
	}
}

// workers is the number of goroutines one call may use; 0 means
// GOMAXPROCS.
var workers atomic.Int64

// SetWorkers sets how many goroutines one BLAS call may use (n < 1: one
// per GOMAXPROCS) and returns the previous setting (0 for the default).
// Results do not depend on it: work is split over blocks of C, never over
// the inner dimension, so every entry is summed in the same order.
func SetWorkers(n int) (prev int) {
	if n < 1 {
		n = 0
	}
	return int(workers.Swap(int64(n)))
}

func nWorkers() int {
	if w := int(workers.Load()); w > 0 {
		return w
	}
	return runtime.GOMAXPROCS(0)
}

// triangle restricts a product to one triangle of a square C (SYRK).
type triangle int8

const (
	full  triangle = iota
	upper          // entries with j >= i
	lower          // entries with j <= i
)

// serialFlops is the product size m·n·k below which a call runs on the
// calling goroutine: the fan-out costs a few microseconds.
const serialFlops = 1 << 18

// gemm computes C = alpha·op(A)·op(B) + beta·C for row-major matrices,
// op(A) m×k and op(B) k×n, op transposing when tA or tB is set; with tri
// set only that triangle of the square C is read or written. Arguments
// are assumed checked (see Implementation). beta = 0 overwrites C, NaN
// included, as BLAS requires.
func gemm[T elem](kn *kernel[T], tA, tB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int, tri triangle) {
	if m == 0 || n == 0 {
		return
	}
	scaleC(m, n, beta, c, ldc, tri)
	if alpha == 0 || k == 0 {
		return
	}
	g := gemmJob[T]{kn: kn, tA: tA, tB: tB, m: m, n: n, k: k, alpha: alpha, a: a, lda: lda, b: b, ldb: ldb, c: c, ldc: ldc, tri: tri, mc: kn.mc, chunks: 1}
	nw := nWorkers()
	if m*n*k < serialFlops || nw == 1 {
		// On the calling goroutine, without closures: no allocation once
		// the pool holds buffers (package nn trains without any).
		own := kn.get()
		g.mBlocks = (m + g.mc - 1) / g.mc
		for g.jc = 0; g.jc < n; g.jc += kn.nc {
			g.nc = min(kn.nc, n-g.jc)
			g.chunkW = g.nc
			for g.pc = 0; g.pc < k; g.pc += kn.kc {
				g.kc = min(kn.kc, k-g.pc)
				g.panel(own)
				g.packB(0, g.nsl())
				for t := 0; t < g.mBlocks; t++ {
					g.task(t, own)
				}
			}
		}
		kn.put(own)
		return
	}
	gemmParallel(g, nw)
}

// gemmJob is one GEMM in progress: the arguments, the blocking chosen
// for them and the panel of B being worked on.
type gemmJob[T elem] struct {
	kn             *kernel[T]
	tA, tB         bool
	m, n, k        int
	alpha          T
	a              []T
	lda            int
	b              []T
	ldb            int
	c              []T
	ldc            int
	tri            triangle
	mc, mBlocks    int
	jc, nc, pc, kc int // the current panel of B: columns jc.., steps pc..
	chunks, chunkW int // column chunks of the panel per block of A
	bp             []T // the packed panel
}

func (g *gemmJob[T]) nsl() int { return (g.nc + g.kn.nr - 1) / g.kn.nr }

// panel sizes the packed panel of B in bufs.
func (g *gemmJob[T]) panel(bufs *packBufs[T]) {
	kn := g.kn
	need := g.nsl() * kn.nr * g.kc
	if cap(bufs.b) < need {
		bufs.b = make([]T, g.nsl()*kn.nr*kn.kc)
	}
	g.bp = bufs.b[:need]
}

// packB packs slivers [s0, s1) of the current panel.
func (g *gemmJob[T]) packB(s0, s1 int) {
	packB(g.kn, g.bp, g.b, g.ldb, g.tB, g.pc, g.jc, g.kc, g.nc, s0, s1)
}

// task packs block t/chunks of A and runs the micro-kernel over column
// chunk t%chunks of the current panel.
func (g *gemmJob[T]) task(t int, bufs *packBufs[T]) {
	kn := g.kn
	ic := (t / g.chunks) * g.mc
	mcc := min(g.mc, g.m-ic)
	j0 := (t % g.chunks) * g.chunkW
	if j0 >= g.nc {
		return
	}
	j1 := min(g.nc, j0+g.chunkW)
	// Skip blocks entirely outside the triangle.
	if g.tri == upper && g.jc+j1-1 < ic || g.tri == lower && g.jc+j0 > ic+mcc-1 {
		return
	}
	need := (mcc + kn.mr - 1) / kn.mr * kn.mr * g.kc
	if cap(bufs.a) < need {
		bufs.a = make([]T, (g.mc+kn.mr-1)/kn.mr*kn.mr*kn.kc)
	}
	ap := bufs.a[:need]
	packA(kn, ap, g.a, g.lda, g.tA, ic, g.pc, mcc, g.kc)
	microTiles(kn, ap, g.bp, g.kc, mcc, ic, g.jc, j0, j1, g.alpha, g.c, g.ldc, g.tri, bufs.tile, false, nil)
}

// gemmParallel runs g on nw goroutines. Every entry of C is computed by
// one task per panel of B, and the panels follow each other in order, so
// the sums do not depend on nw.
func gemmParallel[T elem](g gemmJob[T], nw int) {
	kn := g.kn
	// The size of A's blocks does not change any sum (each entry of C
	// still adds its kc-long partial products in order of pc), so it is
	// cut smaller when that gives every worker several blocks.
	per := (g.m + 2*nw - 1) / (2 * nw)
	per = (per + kn.mr - 1) / kn.mr * kn.mr
	g.mc = max(kn.mr, min(g.mc, per))
	g.mBlocks = (g.m + g.mc - 1) / g.mc
	own := kn.get()
	defer kn.put(own)
	for g.jc = 0; g.jc < g.n; g.jc += kn.nc {
		g.nc = min(kn.nc, g.n-g.jc)
		// Column chunks when A has too few blocks to keep every worker
		// busy (short, wide products).
		g.chunks = 1
		if g.mBlocks < 2*nw {
			g.chunks = max(1, min((2*nw+g.mBlocks-1)/g.mBlocks, (g.nc+kn.nr*8-1)/(kn.nr*8)))
		}
		g.chunkW = ((g.nc+g.chunks-1)/g.chunks + kn.nr - 1) / kn.nr * kn.nr
		for g.pc = 0; g.pc < g.k; g.pc += kn.kc {
			g.kc = min(kn.kc, g.k-g.pc)
			g.panel(own)
			nsl := g.nsl()
			// Pack B's panel, groups of slivers handed out to workers as
			// they come (a worker the OS descheduled holds up no one).
			const group = 8
			var nextB atomic.Int64
			parallel(min(nw, (nsl+group-1)/group), func(_, _ int) {
				for {
					s0 := int(nextB.Add(group) - group)
					if s0 >= nsl {
						return
					}
					g.packB(s0, min(nsl, s0+group))
				}
			})
			var next atomic.Int64
			tasks := g.mBlocks * g.chunks
			parallel(min(nw, tasks), func(_, _ int) {
				bufs := kn.get()
				defer kn.put(bufs)
				for {
					t := int(next.Add(1) - 1)
					if t >= tasks {
						return
					}
					g.task(t, bufs)
				}
			})
		}
	}
}

// parallel runs f(w, n) for w in [0, n) on n goroutines (the caller's
// among them) and waits for all.
func parallel(n int, f func(w, n int)) {
	if n <= 1 {
		f(0, 1)
		return
	}
	var wg sync.WaitGroup
	wg.Add(n - 1)
	for w := 1; w < n; w++ {
		go func() {
			defer wg.Done()
			f(w, n)
		}()
	}
	f(0, n)
	wg.Wait()
}

// scaleC sets C = beta·C on the part gemm writes; beta = 0 stores zeros
// so that NaN or Inf in C does not survive.
func scaleC[T elem](m, n int, beta T, c []T, ldc int, tri triangle) {
	if beta == 1 {
		return
	}
	for i := 0; i < m; i++ {
		j0, j1 := 0, n
		switch tri {
		case upper:
			j0 = i
		case lower:
			j1 = i + 1
		}
		row := c[i*ldc+j0 : i*ldc+j1]
		if beta == 0 {
			clear(row)
			continue
		}
		for j := range row {
			row[j] *= beta
		}
	}
}

// packA copies the mc×kc block of op(A) at (i0, p0) into slivers of mr
// rows, each stored step by step (mr values per k); rows past mc are zero.
func packA[T elem](kn *kernel[T], dst, a []T, lda int, tA bool, i0, p0, mc, kc int) {
	mr := kn.mr
	for ir := 0; ir < mc; ir += mr {
		rows := min(mr, mc-ir)
		s := dst[(ir/mr)*kc*mr:][:kc*mr]
		if !tA {
			if rows < mr {
				clear(s)
			}
			if rows == mr && mr != 6 {
				base := (i0 + ir) * lda
				for r := 0; r < mr; r++ {
					row := a[base+r*lda+p0:][:kc]
					for p, v := range row {
						s[p*mr+r] = v
					}
				}
				continue
			}
			if rows == 6 && mr == 6 {
				base := (i0 + ir) * lda
				r0 := a[base+p0:][:kc]
				r1 := a[base+lda+p0:][:kc]
				r2 := a[base+2*lda+p0:][:kc]
				r3 := a[base+3*lda+p0:][:kc]
				r4 := a[base+4*lda+p0:][:kc]
				r5 := a[base+5*lda+p0:][:kc]
				for p := range kc {
					d := s[p*6 : p*6+6 : p*6+6]
					d[0], d[1], d[2], d[3], d[4], d[5] = r0[p], r1[p], r2[p], r3[p], r4[p], r5[p]
				}
				continue
			}
			for r := 0; r < rows; r++ {
				row := a[(i0+ir+r)*lda+p0:][:kc]
				for p, v := range row {
					s[p*mr+r] = v
				}
			}
			continue
		}
		// op(A) = Aᵀ: step p of the sliver is a contiguous piece of row
		// p0+p of A.
		for p := 0; p < kc; p++ {
			d := s[p*mr : (p+1)*mr]
			copy(d, a[(p0+p)*lda+i0+ir:][:rows])
			if rows < mr {
				clear(d[rows:])
			}
		}
	}
}

// packB copies slivers [s0, s1) of nr columns of the kc×nc block of op(B)
// at (p0, j0), each stored step by step (nr values per k); columns past
// nc are zero.
func packB[T elem](kn *kernel[T], dst, b []T, ldb int, tB bool, p0, j0, kc, nc, s0, s1 int) {
	nr := kn.nr
	for sl := s0; sl < s1; sl++ {
		jr := sl * nr
		cols := min(nr, nc-jr)
		s := dst[sl*kc*nr:][:kc*nr]
		if !tB && kn.packB != nil {
			src := b[p0*ldb+j0+jr:][:(kc-1)*ldb+cols]
			kn.packB(&s[0], &src[0], ldb, kc, cols)
			continue
		}
		if !tB {
			for p := 0; p < kc; p++ {
				d := s[p*nr : (p+1)*nr]
				copy(d, b[(p0+p)*ldb+j0+jr:][:cols])
				if cols < nr {
					clear(d[cols:])
				}
			}
			continue
		}
		// op(B) = Bᵀ: column j of the sliver is a contiguous piece of
		// row j0+jr+j of B.
		if cols < nr {
			clear(s)
		}
		for j := 0; j < cols; j++ {
			row := b[(j0+jr+j)*ldb+p0:][:kc]
			for p, v := range row {
				s[p*nr+j] = v
			}
		}
	}
}

// microTiles runs the micro-kernel over the packed mc×kc block of A
// (rows ic.. of C) and columns [j0, j1) of the packed kc×nc panel of B
// (columns jc+j0.. of C). Tiles that stick out of C or cross the diagonal
// of a triangular product go through a buffer.
//
// With relu set (the last block of the inner dimension), every entry is
// clamped at zero once its sum is complete. With bias set (the first
// block of a product that starts from a bias per row, alpha = 1), row i
// of C starts from bias[i] instead of its old value.
func microTiles[T elem](kn *kernel[T], ap0, bp0 []T, kc, mc, ic, jc, j0, j1 int, alpha T, c []T, ldc int, tri triangle, tile []T, relu bool, bias []T) {
	mr, nr := kn.mr, kn.nr
	tile = tile[:mr*nr]
	for jr := j0; jr < j1; jr += nr {
		cols := min(nr, j1-jr)
		bp := bp0[(jr/nr)*kc*nr:]
		gj := jc + jr // column of C
		for ir := 0; ir < mc; ir += mr {
			rows := min(mr, mc-ir)
			gi := ic + ir // row of C
			inside := true
			switch tri {
			case upper:
				if gj+cols-1 < gi {
					continue // below the diagonal: nothing to do
				}
				inside = gj >= gi+rows-1
			case lower:
				if gj > gi+rows-1 {
					continue
				}
				inside = gj+cols-1 <= gi
			}
			ap := ap0[(ir/mr)*kc*mr:]
			if inside && rows == mr && cols == nr {
				if bias != nil {
					if kn.microBias != nil {
						kn.microBias(kc, &ap[0], &bp[0], &c[gi*ldc+gj], ldc, &bias[gi], relu)
						continue
					}
					for r := range mr {
						row := c[(gi+r)*ldc+gj:][:nr]
						for j := range row {
							row[j] = bias[gi+r]
						}
					}
				}
				kn.micro(kc, &ap[0], &bp[0], &c[gi*ldc+gj], ldc, alpha, relu)
				continue
			}
			if kn.microEdge != nil && tri == full {
				var b0 *T
				if bias != nil {
					b0 = &bias[gi]
				}
				_ = c[(gi+rows-1)*ldc+gj+cols-1]
				kn.microEdge(kc, &ap[0], &bp[0], &c[gi*ldc+gj], ldc, b0, rows, cols, alpha, relu)
				continue
			}
			clear(tile)
			kn.micro(kc, &ap[0], &bp[0], &tile[0], nr, alpha, false)
			for r := 0; r < rows; r++ {
				lo, hi := 0, cols
				switch tri {
				case upper:
					lo = max(0, gi+r-gj)
				case lower:
					hi = min(cols, gi+r-gj+1)
				}
				if lo >= hi {
					continue
				}
				row := c[(gi+r)*ldc+gj+lo : (gi+r)*ldc+gj+hi]
				t := tile[r*nr+lo : r*nr+hi]
				if bias != nil {
					for j := range row {
						row[j] = bias[gi+r] + t[j]
					}
				} else {
					for j := range row {
						row[j] += t[j]
					}
				}
				if relu {
					for j, v := range row {
						if v < 0 {
							row[j] = 0
						}
					}
				}
			}
		}
	}
}
