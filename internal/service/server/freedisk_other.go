//go:build !(linux || darwin || freebsd)

package server

// freeBytes cannot tell the free space here.
func freeBytes(dir string) (uint64, bool) { return 0, false }
