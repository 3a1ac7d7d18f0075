//go:build unix

package server

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time the process has used, user and system: a
// measure of a request's cost that a loaded machine does not stretch.
func cpuTime() time.Duration {
	var u syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &u) != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
