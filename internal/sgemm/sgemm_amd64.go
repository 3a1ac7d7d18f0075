//go:build !noasm

package sgemm

import "golang.org/x/sys/cpu"

// sgemmKernel6x16 is the AVX2/FMA micro-kernel of MulAdd
// (sgemm_amd64.s).
//
//go:noescape
func sgemmKernel6x16(k int, a, b, c *float32)

// sgemmKernel6x16Add adds the tile into C (row stride ldc) directly.
//
//go:noescape
func sgemmKernel6x16Add(k int, a, b, c *float32, ldc int)

// Available reports whether this CPU runs the micro-kernel; without AVX2
// and FMA, Sgemm stays with gonum.
var Available = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// reluAVX clamps x[0:n] at zero, n a positive multiple of 8.
//
//go:noescape
func reluAVX(x *float32, n int)

// ReLU sets every negative value of x to zero (NaN stays NaN), eight at
// a time where the CPU has AVX2.
func ReLU(x []float32) {
	n := len(x) &^ 7
	if Available && n > 0 {
		reluAVX(&x[0], n)
	} else {
		n = 0
	}
	for i := n; i < len(x); i++ {
		if x[i] < 0 {
			x[i] = 0
		}
	}
}
