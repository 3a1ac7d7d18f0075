//go:build !amd64 || noasm

package simdblas

func gatherRows32AVX512(dst *float32, rows int, src *float32, base, step, ntap, tap0 int, tapOff *int, tapMask *uint32) {
	panic("simdblas: no AVX-512 gather kernel on this platform")
}

func gatherIdx32AVX512(dst *float32, rows int, src *float32, base, step, ntap, tap0 int, tapOff *int, idx *[32]int32, cnt int) {
	panic("simdblas: no AVX-512 gather kernel on this platform")
}
