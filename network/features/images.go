package features

import (
	"fmt"
	"image"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/fault"
)

// imageExts are the extensions a folder listing picks up, compared in
// lower case so IMG_0001.JPG counts.
var imageExts = map[string]bool{
	".png": true, ".jpg": true, ".jpeg": true, ".bmp": true,
	".tif": true, ".tiff": true, ".webp": true, ".ppm": true, ".pgm": true,
}

// IsImageName reports whether name has one of the image extensions
// (png, jpg, jpeg, bmp, tif, tiff, webp, ppm, pgm; any case), those of
// pytorch-fid's folder listing.
func IsImageName(name string) bool { return imageExts[strings.ToLower(filepath.Ext(name))] }

// ListImages returns the image files in the host folder dir; see
// ListImagesFS.
func ListImages(dir string, recursive bool) ([]string, error) {
	return ListImagesFS(dataio.HostFS, dir, recursive)
}

// ListImagesFS returns the image files in dir of fsys, sorted by path
// (byte order, as Python's sorted() orders the names pytorch-fid globs),
// descending into subfolders when recursive. Images may differ in size:
// each is resized on its own. A matching name that is not a regular file
// (a named pipe, a device) is refused here, before anything opens it,
// since opening a FIFO blocks until a writer appears.
func ListImagesFS(fsys fs.FS, dir string, recursive bool) ([]string, error) {
	st, err := fs.Stat(fsys, dir)
	if err != nil {
		return nil, &fault.InputError{File: dir, Msg: "cannot read: " + dataio.Cause(err), Err: err}
	}
	if !st.IsDir() {
		return nil, &fault.InputError{File: dir, Msg: "is not a folder"}
	}
	var out []string
	walk := func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return &fault.InputError{File: name, Msg: "cannot read: " + dataio.Cause(err), Err: err}
		}
		if d.IsDir() {
			if name != dir && !recursive {
				return fs.SkipDir
			}
			return nil
		}
		if !IsImageName(d.Name()) {
			return nil
		}
		// Stat follows symbolic links on the host, so a link to an image
		// is fine and a link to a FIFO is not.
		st, err := fs.Stat(fsys, name)
		if err != nil {
			return &fault.InputError{File: name, Msg: "cannot read: " + dataio.Cause(err), Err: err}
		}
		if !st.Mode().IsRegular() {
			return &fault.InputError{File: name, Msg: "is not a regular file (" + st.Mode().Type().String() + ")"}
		}
		out = append(out, name)
		return nil
	}
	if err := fs.WalkDir(fsys, dir, walk); err != nil {
		return nil, err
	}
	sort.Strings(out)
	if len(out) == 0 {
		msg := "holds no images (png, jpg, jpeg, bmp, tif, tiff, webp, ppm, pgm)"
		if !recursive {
			if sub := firstImage(fsys, dir); sub != "" {
				msg = fmt.Sprintf("holds no images (png, jpg, jpeg, bmp, tif, tiff, webp, ppm, pgm) but its subfolders do (%s): use {recursive} to include them", sub)
			}
		}
		return nil, &fault.InputError{File: dir, Msg: msg}
	}
	return out, nil
}

// firstImage returns the first image name found in the subfolders of
// dir, "" for none: a folder whose images are all in subfolders (one
// per class, as ImageFolder datasets are) is read with the recursive
// option. The walk stops at the first image; unreadable folders are
// skipped.
func firstImage(fsys fs.FS, dir string) string {
	found := ""
	_ = fs.WalkDir(fsys, dir, func(name string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		case !d.IsDir() && IsImageName(d.Name()):
			found = name
			return fs.SkipAll
		}
		return nil
	})
	return found
}

// Decode decodes name in fsys (DecodeImage: the header checked before
// any pixel) and converts it as PIL's convert("RGB") does. The image is
// admitted through membudget.Reserve at its price (DecodedBytes) before
// its pixels are decoded, and released when Decode returns.
func Decode(fsys fs.FS, name string) (*RGB, error) {
	var release func()
	img, err := decodeImage(fsys, name, func(cfg image.Config) (err error) {
		release, err = reserve(name, cfg)
		return err
	})
	if release != nil {
		defer release()
	}
	if err != nil {
		return nil, err
	}
	return ToRGB(img), nil
}
