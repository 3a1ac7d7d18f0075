package shareddata

import (
	"os"
	"path/filepath"
	"testing"
)

// Dir returns the shared data directory, or "" when it does not exist.
func Dir() string {
	if d := os.Getenv("GENLENS_SHARED_DATA"); d != "" {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			return d
		}
		return ""
	}
	// Walk up from the working directory (a package directory under go
	// test) to the module root, then to ../shared/data beside it.
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			d := filepath.Join(dir, "..", "shared", "data")
			if st, err := os.Stat(d); err == nil && st.IsDir() {
				return d
			}
			return ""
		}
		if filepath.Dir(dir) == dir {
			return ""
		}
	}
}

// Path returns the path of a file under the shared data directory, or
// skips the test or benchmark with a message when it is absent.
func Path(tb testing.TB, rel string) string {
	tb.Helper()
	d := Dir()
	if d == "" {
		tb.Skipf("shared data not found (set GENLENS_SHARED_DATA or place it at ../shared/data): skipping test on %s", rel)
	}
	p := filepath.Join(d, rel)
	if _, err := os.Stat(p); err != nil {
		tb.Skipf("shared data file %s not found: %v", p, err)
	}
	return p
}
