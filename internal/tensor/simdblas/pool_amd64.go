//go:build !noasm

package simdblas

// The element-wise kernels of the 3×3 pools (pool_amd64.s), over 16·groups
// values; see Max3, Sum3, Sum3Div and MaxStride2.

//go:noescape
func max3AVX512(dst, a, b, c *float32, groups int)

//go:noescape
func sum3AVX512(dst, a, b, c *float32, groups int)

//go:noescape
func sum3DivAVX512(dst, a, b, c, d *float32, groups int)

//go:noescape
func maxStride2AVX512(dst, src *float32, groups int)
