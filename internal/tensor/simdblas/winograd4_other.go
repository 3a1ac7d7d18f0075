//go:build !amd64 || noasm

package simdblas

func winograd4InputAVX512(src *float32, lds, groups int, dst *float32, ldd int) {
	panic("simdblas: no AVX-512 Winograd kernel on this platform")
}

func winograd4OutputAVX512(m *float32, ldm, groups int, bias float32, dst *float32, ldd int) {
	panic("simdblas: no AVX-512 Winograd kernel on this platform")
}
