package dataio

import (
	"archive/zip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sort"
	"strings"
	"time"

	"github.com/genlens/genlens/fault"
)

// npzMembers maps array names (member name without ".npy") to members.
// Like numpy's NpzFile we only treat ".npy" members as arrays.
func npzMembers(path string, zr *zip.Reader) (map[string]*zip.File, []string, error) {
	m := make(map[string]*zip.File)
	var keys []string
	for _, f := range zr.File {
		if !strings.HasSuffix(f.Name, ".npy") || strings.HasSuffix(f.Name, "/") {
			continue
		}
		k := strings.TrimSuffix(f.Name, ".npy")
		if _, dup := m[k]; dup {
			return nil, nil, &fault.InputError{File: path, Msg: fmt.Sprintf("archive holds two members named %q", f.Name)}
		}
		m[k] = f
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return m, keys, nil
}

func openNPZ(fsys fs.FS, path string) (*zip.Reader, func() error, error) {
	ra, size, closeFn, err := openReaderAt(fsys, path)
	if err != nil {
		return nil, nil, err
	}
	zr, err := zip.NewReader(ra, size)
	if errors.Is(err, zip.ErrInsecurePath) {
		// Names like "../x.npy" only matter when extracting to disk,
		// which we never do.
		err = nil
	}
	if err != nil {
		closeFn()
		return nil, nil, &fault.InputError{File: path, Msg: "not a valid .npz (zip) archive: " + err.Error(), Err: err}
	}
	return zr, closeFn, nil
}

// NPZKeys lists the array names in an .npz archive, sorted.
func NPZKeys(path string) ([]string, error) {
	return NPZKeysFS(HostFS, path)
}

// NPZKeysFS is NPZKeys on the file name in fsys.
func NPZKeysFS(fsys fs.FS, path string) ([]string, error) {
	zr, closeFn, err := openNPZ(fsys, path)
	if err != nil {
		return nil, err
	}
	defer closeFn()
	_, keys, err := npzMembers(path, zr)
	return keys, err
}

func readNPZ(fsys fs.FS, path, key string, ranks []int) (*Array, error) {
	zr, closeFn, err := openNPZ(fsys, path)
	if err != nil {
		return nil, err
	}
	defer closeFn()
	members, keys, err := npzMembers(path, zr)
	if err != nil {
		return nil, err
	}
	if len(keys) == 0 {
		return nil, &fault.InputError{File: path, Msg: "archive holds no arrays (.npy members)"}
	}
	key = strings.TrimSuffix(key, ".npy")
	if key == "" {
		if len(keys) > 1 {
			return nil, &fault.InputError{File: path, Msg: fmt.Sprintf("archive holds %d arrays (%s); choose one with a key", len(keys), strings.Join(keys, ", "))}
		}
		key = keys[0]
	}
	f, ok := members[key]
	if !ok {
		return nil, &fault.InputError{File: path, Msg: fmt.Sprintf("no array named %q; keys: %s", key, strings.Join(keys, ", "))}
	}
	s := src{file: path, key: key, stream: true, ranks: ranks}
	if f.Method != zip.Store {
		s.compressed = max(1, int64(f.CompressedSize64))
	}
	rc, err := f.Open()
	if err != nil {
		// zip.ErrAlgorithm: a compression method other than store/deflate.
		return nil, &fault.InputError{File: path, Key: key, Msg: "cannot read member: " + err.Error(), Err: err}
	}
	defer rc.Close()
	// The declared size is not trusted for allocation (-1): decodeNPY
	// grows its buffer as data arrives, and a deflated member may not
	// grow past decompressedLimit of its compressed size.
	var r io.Reader = rc
	if s.compressed > 0 {
		r = newBombReader(rc, s, s.compressed)
	}
	return decodeNPY(s, r, -1)
}

// npzTime is the fixed member timestamp, so the same arrays always give
// the same bytes (numpy's savez writes the same date).
var npzTime = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)

// encodeNPZ writes arrays as an .npz archive, members in sorted key order.
func encodeNPZ(w io.Writer, arrays map[string]*Array, compressed bool) error {
	keys := make([]string, 0, len(arrays))
	for k, a := range arrays {
		if k == "" {
			return errors.New("dataio: empty .npz key")
		}
		if err := a.check(); err != nil {
			return fmt.Errorf("%w (key %q)", err, k)
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	zw := zip.NewWriter(w)
	method := zip.Store
	if compressed {
		method = zip.Deflate
	}
	for _, k := range keys {
		fw, err := zw.CreateHeader(&zip.FileHeader{Name: k + ".npy", Method: method, Modified: npzTime})
		if err != nil {
			return err
		}
		if err := encodeNPY(fw, arrays[k]); err != nil {
			return err
		}
	}
	return zw.Close()
}
