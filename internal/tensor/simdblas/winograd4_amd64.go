//go:build !noasm

package simdblas

// winograd4InputAVX512 and winograd4OutputAVX512 are Winograd4Input and
// Winograd4Output over g whole groups of 16 tiles (winograd4_amd64.s).
//
//go:noescape
func winograd4InputAVX512(src *float32, lds, groups int, dst *float32, ldd int)

//go:noescape
func winograd4OutputAVX512(m *float32, ldm, groups int, bias float32, dst *float32, ldd int)
