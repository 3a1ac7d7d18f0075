//go:build unix

package features

import "syscall"

// entryOpenFlags open a cache entry without following a symbolic link
// and without blocking on a FIFO.
const entryOpenFlags = syscall.O_NOFOLLOW | syscall.O_NONBLOCK
