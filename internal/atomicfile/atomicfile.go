package atomicfile

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
)

// Write creates or replaces path with what write produces. A replaced
// file keeps its permissions; a new one gets 0666 less the process's
// umask, as a file made by os.Create would (os.CreateTemp, which the
// temporary file comes from, would make it private, 0600). On error the
// temporary file is removed and path is untouched.
func Write(path string, write func(io.Writer) error) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	mode := os.FileMode(0o666) &^ umask()
	if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() {
		mode = st.Mode().Perm()
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	track(tmp)
	defer func() {
		untrack(tmp)
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	bw := bufio.NewWriterSize(f, 1<<16)
	if err := write(bw); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if err := f.Chmod(mode); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
