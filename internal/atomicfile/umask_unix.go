//go:build unix

package atomicfile

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// umask returns the process's file mode creation mask. Linux reports it
// in /proc/self/status, which reads it without changing it; elsewhere it
// is read once by setting and restoring it, before any file is written
// through this package.
var umask = sync.OnceValue(func() os.FileMode {
	if b, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "Umask:"); ok {
				if m, err := strconv.ParseUint(strings.TrimSpace(v), 8, 32); err == nil {
					return os.FileMode(m) & os.ModePerm
				}
			}
		}
	}
	m := syscall.Umask(0o022)
	syscall.Umask(m)
	return os.FileMode(m) & os.ModePerm
})
