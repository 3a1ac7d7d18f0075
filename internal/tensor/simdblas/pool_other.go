//go:build !amd64 || noasm

package simdblas

func max3AVX512(dst, a, b, c *float32, groups int) {
	panic("simdblas: no AVX-512 kernel on this platform")
}

func sum3AVX512(dst, a, b, c *float32, groups int) {
	panic("simdblas: no AVX-512 kernel on this platform")
}

func sum3DivAVX512(dst, a, b, c, d *float32, groups int) {
	panic("simdblas: no AVX-512 kernel on this platform")
}

func maxStride2AVX512(dst, src *float32, groups int) {
	panic("simdblas: no AVX-512 kernel on this platform")
}
