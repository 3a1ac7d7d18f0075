//go:build !amd64 || noasm

package simdblas

// Available is false: there is no micro-kernel for this platform (or the
// noasm tag is set), and callers stay with gonum's pure-Go BLAS.
const Available = false

func dgemmKernel6x8(k int, a, b, c *float64, ldc int, alpha float64) {
	panic("simdblas: no DGEMM micro-kernel on this platform")
}

// hasAVX512 is false: there is no AVX-512 kernel for this platform.
const hasAVX512 = false

func sgemmKernel6x16(k int, a, b, c *float32, ldc int, alpha float32, relu bool) {
	panic("simdblas: no SGEMM micro-kernel on this platform")
}

func sgemmKernel12x32(k int, a, b, c *float32, ldc int, alpha float32, relu bool) {
	panic("simdblas: no SGEMM micro-kernel on this platform")
}

// ReLU sets every negative value of x to zero (NaN stays NaN).
func ReLU(x []float32) {
	for i, v := range x {
		if v < 0 {
			x[i] = 0
		}
	}
}

func dotAxpyAVX(n int, a, x, y *float64, s float64) float64 {
	panic("simdblas: no DSYMV kernel on this platform")
}

func sgemmKernel12x32Bias(k int, a, b, c *float32, ldc int, bias *float32, relu bool) {
	panic("simdblas: no SGEMM micro-kernel on this platform")
}

func softmaxExpAVX512(x, m *float32, sum *float64, groups int) {
	panic("simdblas: no AVX-512 kernel on this platform")
}

func geluAVX512(x *float32, groups int) {
	panic("simdblas: no AVX-512 kernel on this platform")
}

func maxIntoAVX512(m, x *float32, groups int) {
	panic("simdblas: no AVX-512 kernel on this platform")
}

func colSums64(x *float32, ldx, rows int, s *float64) {
	panic("simdblas: no AVX-512 kernel on this platform")
}

func colSqDev64(x *float32, ldx, rows int, mean, q *float64) {
	panic("simdblas: no AVX-512 kernel on this platform")
}

func layerNormApply64(x *float32, ldx, rows int, mean, inv *float64, gamma, beta, dst *float32) {
	panic("simdblas: no AVX-512 kernel on this platform")
}

func swishAVX512(a *float32, groups int, negBeta float32, b *float32, gated bool) {
	panic("simdblas: no AVX-512 kernel on this platform")
}

func sgemmEdge12x32(k int, a, b, c *float32, ldc int, bias *float32, rows, cols int, alpha float32, relu bool) {
	panic("simdblas: no SGEMM micro-kernel on this platform")
}

func packB32(dst, src *float32, ldb, kc, cols int) {
	panic("simdblas: no AVX-512 kernel on this platform")
}
