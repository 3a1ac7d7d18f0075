//go:build !amd64 || noasm

package simdblas

func winograd1dInputAVX512(bt *float32, a int, src *float32, off *int32, step, groups int, dst *float32, ldd int) {
	panic("simdblas: no AVX-512 Winograd kernel on this platform")
}

func winograd1dOutputAVX512(at *float32, a, mo int, m *float32, ldm int, off *int32, step, n int, bias float32, dst *float32) {
	panic("simdblas: no AVX-512 Winograd kernel on this platform")
}
