//go:build unix

package simdblas

import "syscall"

// cpuSeconds is the CPU time the process has used, user and system: on a
// shared machine a steadier measure than the wall clock.
func cpuSeconds() float64 {
	var u syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &u) != nil {
		return 0
	}
	return float64(u.Utime.Nano()+u.Stime.Nano()) / 1e9
}
