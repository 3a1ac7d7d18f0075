//go:build !noasm

package simdblas

import "golang.org/x/sys/cpu"

// dgemmKernel6x8 adds alpha times the product of a packed 6×k sliver of
// A and a packed k×8 sliver of B into the 6×8 tile of C at c (rows ldc
// apart); k >= 1 (kernels_amd64.s).
//
//go:noescape
func dgemmKernel6x8(k int, a, b, c *float64, ldc int, alpha float64)

// sgemmKernel6x16 is dgemmKernel6x8 for float32 and a 6×16 tile, which
// it clamps at zero when relu is set.
//
//go:noescape
func sgemmKernel6x16(k int, a, b, c *float32, ldc int, alpha float32, relu bool)

// sgemmKernel12x32 is sgemmKernel6x16 with AVX-512 for a 12×32 tile.
//
//go:noescape
func sgemmKernel12x32(k int, a, b, c *float32, ldc int, alpha float32, relu bool)

// sgemmKernel12x32Bias is sgemmKernel12x32 for the first block of a
// product whose C starts from bias[r] on row r: C = bias + A·B, the old
// C not read.
//
//go:noescape
func sgemmKernel12x32Bias(k int, a, b, c *float32, ldc int, bias *float32, relu bool)

// Available reports whether this CPU runs the micro-kernels (AVX2 and
// FMA, checked once at start-up); without them callers stay with gonum.
var Available = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// hasAVX512 reports whether the float32 kernel can use ZMM registers
// (AVX-512 Foundation, with the OS saving their state, which package cpu
// checks).
var hasAVX512 = Available && cpu.X86.HasAVX512F

// reluAVX clamps x[0:n] at zero, n a positive multiple of 8.
//
//go:noescape
func reluAVX(x *float32, n int)

// ReLU sets every negative value of x to zero (NaN stays NaN), eight at
// a time where the CPU has AVX2.
func ReLU(x []float32) {
	n := len(x) &^ 7
	if Available && n > 0 {
		reluAVX(&x[0], n)
	} else {
		n = 0
	}
	for i := n; i < len(x); i++ {
		if x[i] < 0 {
			x[i] = 0
		}
	}
}

// dotAxpyAVX returns Σ a[j]·x[j] and adds s·a[j] to y[j] for j < n, n a
// positive multiple of 8 (kernels_amd64.s).
//
//go:noescape
func dotAxpyAVX(n int, a, x, y *float64, s float64) float64

// softmaxExpAVX512 is SoftmaxExp over 16·groups columns
// (kernels_amd64.s).
//
//go:noescape
func softmaxExpAVX512(x, m *float32, sum *float64, groups int)

// geluAVX512 is GELU over 16·groups values (kernels_amd64.s).
//
//go:noescape
func geluAVX512(x *float32, groups int)

// maxIntoAVX512 is MaxInto over 16·groups values (kernels_amd64.s).
//
//go:noescape
func maxIntoAVX512(m, x *float32, groups int)

// colSums64, colSqDev64 and layerNormApply64 are the three passes of
// LayerNormCols over a band of 64 columns and rows ≥ 1 rows
// (kernels_amd64.s).
//
//go:noescape
func colSums64(x *float32, ldx, rows int, s *float64)

//go:noescape
func colSqDev64(x *float32, ldx, rows int, mean, q *float64)

//go:noescape
func layerNormApply64(x *float32, ldx, rows int, mean, inv *float64, gamma, beta, dst *float32)

// swishAVX512 is Swish over 16·groups values (kernels_amd64.s).
//
//go:noescape
func swishAVX512(a *float32, groups int, negBeta float32, b *float32, gated bool)

// sgemmEdge12x32 is sgemmKernel12x32 (bias nil) or sgemmKernel12x32Bias
// (bias set) for a tile of which only rows × cols lie inside C, read and
// written through masks (kernels_amd64.s).
//
//go:noescape
func sgemmEdge12x32(k int, a, b, c *float32, ldc int, bias *float32, rows, cols int, alpha float32, relu bool)

// packB32 copies kc rows of cols <= 32 values, ldb apart, into one
// 32-column sliver of packed B, zero past cols (kernels_amd64.s).
//
//go:noescape
func packB32(dst, src *float32, ldb, kc, cols int)
