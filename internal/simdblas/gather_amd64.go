//go:build !noasm

package simdblas

// gatherRows32AVX512 is GatherRows32 with masked loads, which read
// nothing (and cannot fault) where the mask is clear (gather_amd64.s).
//
//go:noescape
func gatherRows32AVX512(dst *float32, rows int, src *float32, base, step, ntap, tap0 int, tapOff *int, tapMask *uint32)
