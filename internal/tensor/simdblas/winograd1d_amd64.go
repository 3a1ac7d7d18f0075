//go:build !noasm

package simdblas

// winograd1dInputAVX512 and winograd1dOutputAVX512 are Winograd1DInput
// over g whole groups of 16 tiles and Winograd1DOutput
// (winograd1d_amd64.s).
//
//go:noescape
func winograd1dInputAVX512(bt *float32, a int, src *float32, off *int32, step, groups int, dst *float32, ldd int)

//go:noescape
func winograd1dOutputAVX512(at *float32, a, mo int, m *float32, ldm int, off *int32, step, n int, bias float32, dst *float32)
