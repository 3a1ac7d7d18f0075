package dataio

import (
	"bytes"
	"io"
	"io/fs"
	"os"

	"github.com/genlens/genlens/fault"
)

// HostFS opens files of the host operating system by the path the user
// typed: relative to the working directory, absolute, or with "..". It is
// what the command line passes to the ...FS readers; a server passes the
// folder of its uploads and tests pass an fstest.MapFS.
//
// It is deliberately laxer than the fs.FS contract (which forbids rooted
// and ".." names), since a command-line path is not a name inside a tree.
var HostFS fs.FS = hostFS{}

type hostFS struct{}

func (hostFS) Open(name string) (fs.File, error) { return os.Open(name) }

func (hostFS) Stat(name string) (fs.FileInfo, error) { return os.Stat(name) }

func (hostFS) ReadDir(name string) ([]fs.DirEntry, error) { return os.ReadDir(name) }

// maxInMemoryArchive bounds what openReaderAt copies into memory for a
// file system whose files cannot seek (zip and Parquet need random access).
const maxInMemoryArchive = 1 << 30

// openRegular opens path in fsys, refusing what is not a regular file.
// It stats before opening: opening a named pipe blocks until a writer
// appears, and a device such as /dev/zero never ends.
func openRegular(fsys fs.FS, path string) (fs.File, fs.FileInfo, error) {
	st, err := fs.Stat(fsys, path)
	if err != nil {
		return nil, nil, openErr(path, err)
	}
	if st.IsDir() {
		return nil, nil, &fault.InputError{File: path, Msg: "is a directory"}
	}
	if !st.Mode().IsRegular() {
		return nil, nil, &fault.InputError{File: path, Msg: "is not a regular file (" + st.Mode().Type().String() + ")"}
	}
	f, err := fsys.Open(path)
	if err != nil {
		return nil, nil, openErr(path, err)
	}
	return f, st, nil
}

// openReaderAt opens path in fsys for random access, as zip and Parquet
// readers need. Files that are io.ReaderAt (os.File, fstest.MapFS) are used
// in place; others are read into memory, up to maxInMemoryArchive bytes.
func openReaderAt(fsys fs.FS, path string) (io.ReaderAt, int64, func() error, error) {
	f, st, err := openRegular(fsys, path)
	if err != nil {
		return nil, 0, nil, err
	}
	if ra, ok := f.(io.ReaderAt); ok {
		return ra, st.Size(), f.Close, nil
	}
	defer f.Close()
	if st.Size() > maxInMemoryArchive {
		return nil, 0, nil, &fault.InputError{File: path, Msg: "archive too large to read from this source"}
	}
	b, err := io.ReadAll(io.LimitReader(f, maxInMemoryArchive+1))
	if err != nil {
		return nil, 0, nil, openErr(path, err)
	}
	return bytes.NewReader(b), int64(len(b)), func() error { return nil }, nil
}
