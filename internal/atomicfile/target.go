package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
)

// SameAs returns the first of inputs that names the existing file path
// (through links and different spellings of the path), or "": a writer
// asks it before replacing path, so that no input is overwritten by an
// output. Inputs that do not exist cannot collide.
func SameAs(path string, inputs ...string) string {
	sp, err := os.Stat(path)
	if err != nil {
		return ""
	}
	for _, in := range inputs {
		if in == "" {
			continue
		}
		if si, err := os.Stat(in); err == nil && os.SameFile(sp, si) {
			return in
		}
	}
	return ""
}

// CheckTarget reports, before any work is done, why path cannot be
// written as a file: it is a directory, or its parent directory does
// not exist or is not one.
func CheckTarget(path string) error {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fmt.Errorf("%s is a directory; give a file name", path)
	}
	parent := filepath.Dir(path)
	st, err := os.Stat(parent)
	switch {
	case err != nil:
		return fmt.Errorf("%s: the directory %s does not exist", path, parent)
	case !st.IsDir():
		return fmt.Errorf("%s: %s is not a directory", path, parent)
	}
	return nil
}
