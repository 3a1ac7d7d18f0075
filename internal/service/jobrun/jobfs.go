package jobrun

import (
	"archive/zip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"sync"

	"github.com/genlens/genlens/fault"
)

// maxZipEntry bounds the uncompressed size of one file inside a .zip
// upload (an image, for features): a few kilobytes of zip must not
// unpack into gigabytes.
const maxZipEntry = 64 << 20

// jobFS is the file system of one job: the uploads, named by id, where a
// .zip upload is also a folder ("<id>.zip/img001.png"), so that a job
// reading a folder of images (features) reads the archive's contents.
// Archives are opened once per job and closed by Close.
type jobFS struct {
	uploads fs.FS

	mu   sync.Mutex
	zips map[string]*zip.Reader
	open []io.Closer
}

func newJobFS(uploads fs.FS) *jobFS { return &jobFS{uploads: uploads, zips: map[string]*zip.Reader{}} }

// Open opens an upload, or a name inside a .zip upload.
func (j *jobFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	first, rest, _ := strings.Cut(name, "/")
	if !strings.HasSuffix(first, ".zip") || !uploadID.MatchString(first) {
		return j.uploads.Open(name)
	}
	zr, err := j.zip(first)
	if err != nil {
		return nil, err
	}
	if rest == "" {
		rest = "."
	}
	f, err := zr.Open(rest)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			pe.Path = name
		}
		return nil, err
	}
	return f, nil
}

// zip opens the archive of an upload, checking every entry's size.
func (j *jobFS) zip(id string) (*zip.Reader, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if zr := j.zips[id]; zr != nil {
		return zr, nil
	}
	f, err := j.uploads.Open(id)
	if err != nil {
		return nil, err
	}
	ra, ok := f.(io.ReaderAt)
	st, serr := f.Stat()
	if !ok || serr != nil {
		f.Close()
		return nil, &fault.InputError{File: id, Msg: "cannot read the archive"}
	}
	zr, err := zip.NewReader(ra, st.Size())
	if err != nil {
		f.Close()
		return nil, &fault.InputError{File: id, Msg: "not a valid zip archive: " + err.Error(), Err: err}
	}
	for _, e := range zr.File {
		if e.UncompressedSize64 > maxZipEntry {
			f.Close()
			return nil, &fault.InputError{File: id + "/" + e.Name, Msg: fmt.Sprintf("%d bytes uncompressed, over the limit of %d for one file in an archive", e.UncompressedSize64, maxZipEntry)}
		}
	}
	j.zips[id] = zr
	j.open = append(j.open, f)
	return zr, nil
}

// Close closes the archives the job opened.
func (j *jobFS) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	var err error
	for _, c := range j.open {
		err = errors.Join(err, c.Close())
	}
	j.open, j.zips = nil, map[string]*zip.Reader{}
	return err
}
