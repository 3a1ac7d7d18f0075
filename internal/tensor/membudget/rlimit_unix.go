//go:build unix

package membudget

import "syscall"

// addressSpaceLimit returns the process's address-space limit
// (RLIMIT_AS, as set by ulimit -v or prlimit --as), 0 when there is none
// (unlimited is the largest value).
func addressSpaceLimit() int64 {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &r); err != nil || uint64(r.Cur) > 1<<60 {
		return 0
	}
	return int64(r.Cur)
}
