//go:build !noasm

package simdblas

// gatherRows32AVX512 is GatherRows32 with masked loads, which read
// nothing (and cannot fault) where the mask is clear (gather_amd64.s).
//
//go:noescape
func gatherRows32AVX512(dst *float32, rows int, src *float32, base, step, ntap, tap0 int, tapOff *int, tapMask *uint32)

// gatherIdx32AVX512 is GatherIdx32 with two 16-lane gathers a row, the
// lanes past cnt masked off (gather_amd64.s).
//
//go:noescape
func gatherIdx32AVX512(dst *float32, rows int, src *float32, base, step, ntap, tap0 int, tapOff *int, idx *[32]int32, cnt int)
