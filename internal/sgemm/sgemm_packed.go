package sgemm

import "sync"

// Blocking of MulAdd, in the manner of Goto and van de Geijn
// ("Anatomy of High-Performance Matrix Multiplication", ACM TOMS 2008):
// a kc×nc block of B is packed once and stays in L2 while mc×kc blocks of
// A stream past it; the 6×16 micro-kernel reads a 6-row sliver of A and
// a 16-column sliver of B from L1.
const (
	kernMR = 6
	kernNR = 16
	blkKC  = 256
	blkMC  = 96
	blkNC  = 1024
)

type sgemmBufs struct{ a, b []float32 }

var sgemmPool = sync.Pool{New: func() any {
	return &sgemmBufs{a: make([]float32, blkMC*blkKC), b: make([]float32, blkKC*blkNC)}
}}

// MulAdd computes C += A·B for row-major A (m×k), B (k×n), C (m×n)
// on one goroutine with the AVX2/FMA micro-kernel. gonum's pure-Go SGEMM
// runs axpy loops over 64-wide blocks with SSE and reaches about a third
// of what register blocking with FMA does on the convolutions of
// package inception, which dominate its run time. Callers that want
// parallelism run several products at once (one per image).
func MulAdd(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	bufs := sgemmPool.Get().(*sgemmBufs)
	defer sgemmPool.Put(bufs)
	var tile [kernMR * kernNR]float32
	for jc := 0; jc < n; jc += blkNC {
		nc := min(blkNC, n-jc)
		for pc := 0; pc < k; pc += blkKC {
			kc := min(blkKC, k-pc)
			packB(bufs.b, b[pc*ldb+jc:], ldb, kc, nc)
			for ic := 0; ic < m; ic += blkMC {
				mc := min(blkMC, m-ic)
				packA(bufs.a, a[ic*lda+pc:], lda, mc, kc)
				microTiles(bufs.a, bufs.b, kc, mc, nc, c[ic*ldc+jc:], ldc, &tile)
			}
		}
	}
}

// packA copies an mc×kc block of A into slivers of kernMR rows, each
// stored step by step (kernMR values per k), rows past mc zero.
func packA(dst, a []float32, lda, mc, kc int) {
	for ir := 0; ir < mc; ir += kernMR {
		mr := min(kernMR, mc-ir)
		s := dst[(ir/kernMR)*kc*kernMR:][:kc*kernMR]
		if mr < kernMR {
			clear(s)
		}
		for r := 0; r < mr; r++ {
			row := a[(ir+r)*lda:][:kc]
			for p, v := range row {
				s[p*kernMR+r] = v
			}
		}
	}
}

// packB copies a kc×nc block of B into slivers of kernNR columns, each
// stored step by step (kernNR values per k), columns past nc zero.
func packB(dst, b []float32, ldb, kc, nc int) {
	for jr := 0; jr < nc; jr += kernNR {
		nr := min(kernNR, nc-jr)
		s := dst[(jr/kernNR)*kc*kernNR:][:kc*kernNR]
		for p := 0; p < kc; p++ {
			d := s[p*kernNR : (p+1)*kernNR]
			copy(d, b[p*ldb+jr:p*ldb+jr+nr])
			if nr < kernNR {
				clear(d[nr:])
			}
		}
	}
}

// Packed is a left-hand matrix A packed once for MulAddPacked, in the
// order MulAdd would pack it block by block. Convolution weights are
// multiplied by thousands of feature maps; packing them at load time
// saves about a tenth of each product.
type Packed struct {
	m, k   int
	blocks [][]float32 // per (pc, ic) block, pc-major
}

// Pack packs the row-major m×k matrix a (leading dimension lda).
func Pack(m, k int, a []float32, lda int) *Packed {
	p := &Packed{m: m, k: k}
	for pc := 0; pc < k; pc += blkKC {
		kc := min(blkKC, k-pc)
		for ic := 0; ic < m; ic += blkMC {
			mc := min(blkMC, m-ic)
			buf := make([]float32, ((mc+kernMR-1)/kernMR)*kernMR*kc)
			packA(buf, a[ic*lda+pc:], lda, mc, kc)
			p.blocks = append(p.blocks, buf)
		}
	}
	return p
}

// Rows and Cols return the shape of the packed matrix.
func (p *Packed) Rows() int { return p.m }
func (p *Packed) Cols() int { return p.k }

// MulAddPacked computes C += A·B with A packed by Pack: B is k×n, C m×n,
// row-major.
func MulAddPacked(p *Packed, n int, b []float32, ldb int, c []float32, ldc int) {
	bufs := sgemmPool.Get().(*sgemmBufs)
	defer sgemmPool.Put(bufs)
	var tile [kernMR * kernNR]float32
	m, k := p.m, p.k
	nmc := (m + blkMC - 1) / blkMC
	for jc := 0; jc < n; jc += blkNC {
		nc := min(blkNC, n-jc)
		for pc := 0; pc < k; pc += blkKC {
			kc := min(blkKC, k-pc)
			packB(bufs.b, b[pc*ldb+jc:], ldb, kc, nc)
			for ic := 0; ic < m; ic += blkMC {
				mc := min(blkMC, m-ic)
				ablk := p.blocks[(pc/blkKC)*nmc+ic/blkMC]
				microTiles(ablk, bufs.b, kc, mc, nc, c[ic*ldc+jc:], ldc, &tile)
			}
		}
	}
}

// microTiles runs the micro-kernel over one packed mc×kc block of A and
// kc×nc block of B, adding into C (whose (0, 0) is the block's corner).
func microTiles(ap0, bp0 []float32, kc, mc, nc int, c []float32, ldc int, tile *[kernMR * kernNR]float32) {
	for jr := 0; jr < nc; jr += kernNR {
		nr := min(kernNR, nc-jr)
		bp := bp0[(jr/kernNR)*kc*kernNR:]
		for ir := 0; ir < mc; ir += kernMR {
			mr := min(kernMR, mc-ir)
			ap := ap0[(ir/kernMR)*kc*kernMR:]
			if mr == kernMR && nr == kernNR {
				sgemmKernel6x16Add(kc, &ap[0], &bp[0], &c[ir*ldc+jr], ldc)
				continue
			}
			sgemmKernel6x16(kc, &ap[0], &bp[0], &tile[0])
			cb := c[ir*ldc+jr:]
			for r := 0; r < mr; r++ {
				row := cb[r*ldc : r*ldc+nr]
				t := tile[r*kernNR : r*kernNR+nr]
				for j := range row {
					row[j] += t[j]
				}
			}
		}
	}
}
