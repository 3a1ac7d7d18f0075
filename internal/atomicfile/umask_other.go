//go:build !unix

package atomicfile

import "os"

// umask is zero where the system has none (Windows): permissions there
// come from access-control lists, not mode bits.
func umask() os.FileMode { return 0 }
