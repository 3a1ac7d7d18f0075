//go:build linux || darwin || freebsd

package server

import "golang.org/x/sys/unix"

// freeBytes returns the bytes an unprivileged process may still write to
// the file system holding dir; ok is false when it cannot tell.
func freeBytes(dir string) (n uint64, ok bool) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, false
	}
	return st.Bavail * uint64(st.Bsize), true
}
