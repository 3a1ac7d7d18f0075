//go:build !amd64 || noasm

package sgemm

const Available = false

func sgemmKernel6x16(k int, a, b, c *float32) {
	panic("linalg: no SGEMM micro-kernel on this platform")
}

func sgemmKernel6x16Add(k int, a, b, c *float32, ldc int) {
	panic("linalg: no SGEMM micro-kernel on this platform")
}

// ReLU sets every negative value of x to zero (NaN stays NaN).
func ReLU(x []float32) {
	for i, v := range x {
		if v < 0 {
			x[i] = 0
		}
	}
}
