package inception

import (
	"bufio"
	"fmt"
	"image"
	_ "image/jpeg" // decoders registered for image.Decode
	_ "image/png"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"genlens/dataio"
	"genlens/imageio"

	_ "golang.org/x/image/bmp"
	_ "golang.org/x/image/tiff"
	_ "golang.org/x/image/webp"
)

// imageExts are the extensions a folder listing picks up, compared in
// lower case so IMG_0001.JPG counts.
var imageExts = map[string]bool{
	".png": true, ".jpg": true, ".jpeg": true, ".bmp": true,
	".tif": true, ".tiff": true, ".webp": true,
}

// IsImageName reports whether name has one of the image extensions
// (png, jpg, jpeg, bmp, tif, tiff, webp; any case).
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
		return nil, &dataio.InputError{File: dir, Msg: "cannot read: " + causeMsg(err), Err: err}
	}
	if !st.IsDir() {
		return nil, &dataio.InputError{File: dir, Msg: "is not a folder"}
	}
	var out []string
	walk := func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return &dataio.InputError{File: name, Msg: "cannot read: " + causeMsg(err), Err: err}
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
			return &dataio.InputError{File: name, Msg: "cannot read: " + causeMsg(err), Err: err}
		}
		if !st.Mode().IsRegular() {
			return &dataio.InputError{File: name, Msg: "is not a regular file (" + st.Mode().Type().String() + ")"}
		}
		out = append(out, name)
		return nil
	}
	if err := fs.WalkDir(fsys, dir, walk); err != nil {
		return nil, err
	}
	sort.Strings(out)
	if len(out) == 0 {
		return nil, &dataio.InputError{File: dir, Msg: "holds no images (png, jpg, jpeg, bmp, tif, tiff, webp)"}
	}
	return out, nil
}

// DecodeFile decodes one host image file; see DecodeFileFS.
func DecodeFile(path string) (image.Image, error) { return DecodeFileFS(dataio.HostFS, path) }

// DecodeFileFS decodes one image file of any supported format. It refuses
// what is not a regular file before opening it, and reads the header
// first so that an image declaring more than imageio.MaxImagePixels
// pixels (a 69-byte PNG can claim 100000×100000) is refused before any
// pixel buffer is allocated.
func DecodeFileFS(fsys fs.FS, name string) (image.Image, error) {
	st, err := fs.Stat(fsys, name)
	if err != nil {
		return nil, &dataio.InputError{File: name, Msg: "cannot read: " + causeMsg(err), Err: err}
	}
	if !st.Mode().IsRegular() {
		return nil, &dataio.InputError{File: name, Msg: "is not a regular file (" + st.Mode().Type().String() + ")"}
	}
	open := func() (fs.File, error) {
		f, err := fsys.Open(name)
		if err != nil {
			return nil, &dataio.InputError{File: name, Msg: "cannot read: " + causeMsg(err), Err: err}
		}
		return f, nil
	}
	f, err := open()
	if err != nil {
		return nil, err
	}
	cfg, format, err := image.DecodeConfig(bufio.NewReader(f))
	f.Close()
	if err != nil {
		return nil, &dataio.InputError{File: name, Msg: "not a readable image (png, jpeg, bmp, tiff, webp): " + err.Error(), Err: err}
	}
	if cfg.Width < 1 || cfg.Height < 1 {
		return nil, &dataio.InputError{File: name, Msg: fmt.Sprintf("declares an empty %dx%d image", cfg.Width, cfg.Height)}
	}
	if int64(cfg.Width)*int64(cfg.Height) > imageio.MaxImagePixels {
		return nil, &dataio.InputError{File: name, Msg: fmt.Sprintf("declares a %dx%d image, more than the %d pixels genlens reads; downsample the images", cfg.Width, cfg.Height, imageio.MaxImagePixels)}
	}
	// Files need not seek (an upload, an fstest.MapFS), so open again
	// rather than rewind.
	if f, err = open(); err != nil {
		return nil, err
	}
	defer f.Close()
	img, _, err := image.Decode(bufio.NewReader(f))
	if err != nil {
		return nil, &dataio.InputError{File: name, Msg: "not a valid " + format + " file: " + err.Error(), Err: err}
	}
	return img, nil
}

// LoadImage decodes a host image file and preprocesses it for the network.
func LoadImage(path string, mode Mode) ([]float32, error) {
	return LoadImageFS(dataio.HostFS, path, mode)
}

// LoadImageFS decodes name in fsys and preprocesses it for the network.
func LoadImageFS(fsys fs.FS, name string, mode Mode) ([]float32, error) {
	img, err := DecodeFileFS(fsys, name)
	if err != nil {
		return nil, err
	}
	x, err := Preprocess(ToRGB(img), mode)
	if err != nil {
		return nil, &dataio.InputError{File: name, Msg: err.Error()}
	}
	return x, nil
}
