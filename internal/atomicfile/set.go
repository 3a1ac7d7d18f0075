package atomicfile

import (
	"bufio"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"
)

// live holds the temporary files being written or waiting in a Set, so
// that RemoveTemps can delete them when the process is told to stop at
// once.
var live = struct {
	sync.Mutex
	m map[string]bool
}{m: map[string]bool{}}

func track(tmp string)   { live.Lock(); live.m[tmp] = true; live.Unlock() }
func untrack(tmp string) { live.Lock(); delete(live.m, tmp); live.Unlock() }

// RemoveTemps deletes every temporary file of a Write or Set still in
// progress. A program that exits at once on a signal calls it first, so
// that an interrupted run leaves no hidden partial files (tens of
// megabytes for a disentangle matrix).
func RemoveTemps() {
	live.Lock()
	defer live.Unlock()
	for tmp := range live.m {
		os.Remove(tmp)
		delete(live.m, tmp)
	}
}

// Set writes several files that belong together, such as the artifacts
// of one run: Add writes each to a temporary file beside its path, and
// Commit renames them all at the end, so that an interrupted or failed
// run never leaves a mix of new files and files from an earlier run
// (only a crash inside Commit's renames could). Abort removes what was
// added. A Set is not safe for concurrent use.
type Set struct {
	pending []pending
}

type pending struct{ tmp, path string }

// Add writes path's future content to a temporary file. On error nothing
// is left behind for this file; the Set still holds the earlier ones.
func (s *Set) Add(path string, write func(io.Writer) error) (err error) {
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
		if err != nil {
			f.Close()
			os.Remove(tmp)
			untrack(tmp)
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
	s.pending = append(s.pending, pending{tmp, path})
	return nil
}

// Commit renames every added file into place, in the order added. After
// an error the files not yet renamed are removed.
func (s *Set) Commit() error {
	var err error
	for _, p := range s.pending {
		if err == nil {
			err = os.Rename(p.tmp, p.path)
		}
		if err != nil {
			os.Remove(p.tmp)
		}
		untrack(p.tmp)
	}
	s.pending = nil
	return err
}

// Abort removes every added file; the paths keep their old content.
func (s *Set) Abort() {
	for _, p := range s.pending {
		os.Remove(p.tmp)
		untrack(p.tmp)
	}
	s.pending = nil
}

// WriteAll writes files as one Set: all of them, or (on the first error)
// none.
func WriteAll(paths []string, writers []func(io.Writer) error) error {
	if len(paths) != len(writers) {
		return errors.New("atomicfile: WriteAll: paths and writers differ in number")
	}
	var s Set
	for i, p := range paths {
		if err := s.Add(p, writers[i]); err != nil {
			s.Abort()
			return err
		}
	}
	return s.Commit()
}
