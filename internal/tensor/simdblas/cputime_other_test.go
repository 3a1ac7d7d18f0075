//go:build !unix

package simdblas

// cpuSeconds is unknown here: 0.
func cpuSeconds() float64 { return 0 }
