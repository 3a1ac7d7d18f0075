package simdblas

// Packed is a left-hand float32 matrix A packed once for MulAddPacked, in
// the slivers the SGEMM driver would pack it into block by block.
// Convolution weights are multiplied by thousands of feature maps;
// packing them at load time saves about a tenth of each product.
type Packed struct {
	kn     *kernel[float32] // the kernel it is packed for
	m, k   int
	blocks [][]float32 // per (pc, ic) block, pc-major
}

// packedMC is the height of Packed's blocks of A. It changes no sum.
const packedMC = 96

// packedSmallNC is the width of B's panels when A is one block high
// (m <= packedMC): every sliver is then used by one block only, and a
// panel of 512 columns (at most 512 KB) is still in L2 when the kernel
// reads it, where the driver's 4096 columns (4 MB) had gone to L3. With
// more blocks, the wide panel saves streaming A's blocks again per panel.
const packedSmallNC = 512

// Pack packs the row-major m×k matrix a (leading dimension lda).
func Pack(m, k int, a []float32, lda int) *Packed {
	kn := sgemmK
	p := &Packed{kn: kn, m: m, k: k}
	for pc := 0; pc < k; pc += kn.kc {
		kc := min(kn.kc, k-pc)
		for ic := 0; ic < m; ic += packedMC {
			mc := min(packedMC, m-ic)
			buf := make([]float32, (mc+kn.mr-1)/kn.mr*kn.mr*kc)
			packA(kn, buf, a, lda, false, ic, pc, mc, kc)
			p.blocks = append(p.blocks, buf)
		}
	}
	return p
}

// Rows and Cols return the shape of the packed matrix.
func (p *Packed) Rows() int { return p.m }
func (p *Packed) Cols() int { return p.k }

// MulAddPacked computes C += A·B with A packed by Pack: B is k×n, C m×n,
// row-major. It runs on the calling goroutine (package inception runs one
// image per goroutine) and sums every entry in the same order as the
// SGEMM of Implementation, so the two give identical results.
func MulAddPacked(p *Packed, n int, b []float32, ldb int, c []float32, ldc int) {
	mulAddPacked(p, n, b, ldb, c, ldc, false, nil)
}

// MulAddPackedReLU computes C = max(C + A·B, 0) as MulAddPacked, the
// clamp applied by the micro-kernel as it stores each finished tile (no
// second pass over C). NaN stays NaN. With C holding a bias, it is a
// convolution with its folded batch norm and ReLU in one pass.
func MulAddPackedReLU(p *Packed, n int, b []float32, ldb int, c []float32, ldc int) {
	mulAddPacked(p, n, b, ldb, c, ldc, true, nil)
}

// MulPackedBias computes C = A·B + bias, bias[i] added to row i of C,
// and with relu set clamps the result at zero, as MulAddPackedReLU on a
// C filled with the bias would (the same sums, bit for bit) but without
// that pass: the first block of the product starts each tile from the
// bias. C's old values are not read. len(bias) >= p.Rows().
func MulPackedBias(p *Packed, n int, b []float32, ldb int, bias, c []float32, ldc int, relu bool) {
	if p.m == 0 || n == 0 {
		return
	}
	_ = bias[p.m-1]
	if p.k == 0 {
		for i := range p.m {
			row := c[i*ldc : i*ldc+n]
			for j := range row {
				row[j] = bias[i]
			}
		}
	}
	mulAddPacked(p, n, b, ldb, c, ldc, relu, bias[:p.m])
}

// PanelFunc writes rows [p0, p0+kc) and columns [j0, j0+nc) of a
// right-hand matrix B straight into the packed layout the kernel reads:
// sliver s (columns j0+s·nr up to j0+(s+1)·nr) at dst[s·kc·nr:], its row
// p0+p at [p·nr : (p+1)·nr], the columns past nc zero.
type PanelFunc func(dst []float32, p0, kc, j0, nc, nr int)

// MulPackedBiasPanels is MulPackedBias with B produced panel by panel by
// fill rather than read from a matrix: a convolution writes its im2col
// matrix in the packed layout and saves both the matrix and the copy
// into the panels. B has p.Cols() rows and n columns.
func MulPackedBiasPanels(p *Packed, n int, fill PanelFunc, bias, c []float32, ldc int, relu bool) {
	if p.m == 0 || n == 0 {
		return
	}
	_ = bias[p.m-1]
	if p.k == 0 {
		MulPackedBias(p, n, nil, n, bias, c, ldc, relu)
		return
	}
	mulAddPanels(p, n, fill, c, ldc, relu, bias[:p.m])
}

func mulAddPacked(p *Packed, n int, b []float32, ldb int, c []float32, ldc int, relu bool, bias []float32) {
	if p.m == 0 || n == 0 {
		return
	}
	if p.k == 0 {
		if relu {
			for i := range p.m {
				ReLU(c[i*ldc : i*ldc+n])
			}
		}
		return
	}
	kn := p.kn
	mulAddPanels(p, n, func(dst []float32, p0, kc, j0, nc, _ int) {
		packB(kn, dst, b, ldb, false, p0, j0, kc, nc, 0, (nc+kn.nr-1)/kn.nr)
	}, c, ldc, relu, bias)
}

// mulAddPanels is mulAddPacked with k > 0 and B's panels from fill.
func mulAddPanels(p *Packed, n int, fill PanelFunc, c []float32, ldc int, relu bool, bias []float32) {
	kn := p.kn
	m, k := p.m, p.k
	bufs := kn.get()
	defer kn.put(bufs)
	nmc := (m + packedMC - 1) / packedMC
	panelW := kn.nc
	if m <= packedMC {
		panelW = packedSmallNC
	}
	for jc := 0; jc < n; jc += panelW {
		nc := min(panelW, n-jc)
		nsl := (nc + kn.nr - 1) / kn.nr
		for pc := 0; pc < k; pc += kn.kc {
			kc := min(kn.kc, k-pc)
			if need := nsl * kn.nr * kc; cap(bufs.b) < need {
				bufs.b = make([]float32, nsl*kn.nr*kn.kc)
			}
			bp := bufs.b[:nsl*kn.nr*kc]
			fill(bp, pc, kc, jc, nc, kn.nr)
			for ic := 0; ic < m; ic += packedMC {
				mc := min(packedMC, m-ic)
				ablk := p.blocks[(pc/kn.kc)*nmc+ic/packedMC]
				var bb []float32
				if pc == 0 {
					bb = bias
				}
				microTiles(kn, ablk, bp, kc, mc, ic, jc, 0, nc, 1, c, ldc, full, bufs.tile, relu && pc+kc == k, bb)
			}
		}
	}
}
