package features

import (
	"bufio"
	"fmt"
	"image"
	_ "image/jpeg" // decoders registered for image.Decode
	_ "image/png"
	"io/fs"

	_ "golang.org/x/image/bmp"
	_ "golang.org/x/image/tiff"
	_ "golang.org/x/image/webp"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/fault"
)

// MaxImagePixels bounds the width × height an image file may declare: its
// header is read first, so that a small file claiming a huge image is
// refused instead of exhausting memory.
const MaxImagePixels = 1 << 24

// DecodeImage decodes the image file name of fsys, in any supported format
// (png, jpeg, bmp, tiff, webp). It refuses
// what is not a regular file before opening it, and reads the header
// first so that an image declaring more than MaxImagePixels
// pixels (a 69-byte PNG can claim 100000×100000) is refused before any
// pixel buffer is allocated, and a JPEG of more scans than its size
// allows (MaxJPEGScans for small images, fewer for large ones) before
// it is decoded.
func DecodeImage(fsys fs.FS, name string) (image.Image, error) {
	st, err := fs.Stat(fsys, name)
	if err != nil {
		return nil, &fault.InputError{File: name, Msg: "cannot read: " + dataio.Cause(err), Err: err}
	}
	if !st.Mode().IsRegular() {
		return nil, &fault.InputError{File: name, Msg: "is not a regular file (" + st.Mode().Type().String() + ")"}
	}
	open := func() (fs.File, error) {
		f, err := fsys.Open(name)
		if err != nil {
			return nil, &fault.InputError{File: name, Msg: "cannot read: " + dataio.Cause(err), Err: err}
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
		return nil, &fault.InputError{File: name, Msg: "not a readable image (png, jpeg, bmp, tiff, webp): " + err.Error(), Err: err}
	}
	if cfg.Width < 1 || cfg.Height < 1 {
		return nil, &fault.InputError{File: name, Msg: fmt.Sprintf("declares an empty %dx%d image", cfg.Width, cfg.Height)}
	}
	if int64(cfg.Width)*int64(cfg.Height) > MaxImagePixels {
		return nil, &fault.InputError{File: name, Msg: fmt.Sprintf("declares a %dx%d image, more than the %d pixels genlens reads; downsample the images", cfg.Width, cfg.Height, MaxImagePixels)}
	}
	if format == "jpeg" {
		// Decoding work grows with the scans as well as the pixels:
		// count them first (a cheap walk of the markers).
		if f, err = open(); err != nil {
			return nil, err
		}
		_, err := jpegScans(f, jpegScanLimit(int64(cfg.Width)*int64(cfg.Height)))
		f.Close()
		if err != nil {
			return nil, &fault.InputError{File: name, Msg: "JPEG with " + err.Error(), Err: err}
		}
	}
	// Files need not seek (an upload, an fstest.MapFS), so open again
	// rather than rewind.
	if f, err = open(); err != nil {
		return nil, err
	}
	defer f.Close()
	img, _, err := image.Decode(bufio.NewReader(f))
	if err != nil {
		return nil, &fault.InputError{File: name, Msg: "not a valid " + format + " file: " + err.Error(), Err: err}
	}
	return img, nil
}
