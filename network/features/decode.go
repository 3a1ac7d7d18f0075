package features

import (
	"bufio"
	"errors"
	"fmt"
	"image"
	"image/color"
	_ "image/jpeg" // decoders registered for image.Decode
	_ "image/png"
	"io/fs"

	_ "golang.org/x/image/bmp"
	_ "golang.org/x/image/tiff"
	_ "golang.org/x/image/webp"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/tensor/membudget"
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
	return decodeImage(fsys, name, nil)
}

// decodeImage is DecodeImage calling admit, when not nil, with the
// image's header once it is checked and before any pixel is decoded.
func decodeImage(fsys fs.FS, name string, admit func(cfg image.Config) error) (image.Image, error) {
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
	if admit != nil {
		if err := admit(cfg); err != nil {
			return nil, err
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

// DecodedBytes is what decoding and preprocessing an image of cfg hold
// at once: its decoded form, width × height × the bytes a pixel of its
// colour model takes (1 for grey or a palette, 2 for 16-bit grey, 3 for
// YCbCr, 4 for 8-bit RGBA or CMYK, 8 for 16-bit RGBA and any other
// model), plus PixelWorkBytes a pixel for its RGB copy and the float32
// planes preprocessing makes of it. A 16-bit RGBA 4096 × 4096 PNG of
// 130 KB on disk takes 368 MiB.
func DecodedBytes(cfg image.Config) int64 {
	return int64(max(cfg.Width, 0)) * int64(max(cfg.Height, 0)) * (int64(pixelBytes(cfg.ColorModel)) + PixelWorkBytes)
}

// PixelWorkBytes is what an image takes a pixel besides its decoded
// form: its 8-bit RGB copy (3 bytes) and three float32 planes of it (12),
// the most preprocessing makes (clean-fid's "clean" mode).
const PixelWorkBytes = 3 + 12

// pixelBytes is the bytes a pixel of colour model m takes decoded: the
// channels of the decoders' image type times the bytes of a sample.
func pixelBytes(m color.Model) int {
	switch m {
	case color.GrayModel, color.AlphaModel:
		return 1
	case color.Gray16Model, color.Alpha16Model:
		return 2
	case color.YCbCrModel:
		return 3
	case color.NYCbCrAModel, color.RGBAModel, color.NRGBAModel, color.CMYKModel:
		return 4
	}
	if _, ok := m.(color.Palette); ok {
		return 1
	}
	return 8 // 16-bit RGBA, or a model not known here: priced as the largest
}

// describe names an image of cfg for messages: "4096x4096, 8 bytes a
// pixel decoded".
func describe(cfg image.Config) string {
	return fmt.Sprintf("%dx%d, %d bytes a pixel decoded and %d more to convert and preprocess", cfg.Width, cfg.Height, pixelBytes(cfg.ColorModel), PixelWorkBytes)
}

// reserve admits an image of cfg through membudget.Reserve: over the
// budget alone, an *fault.InputError naming the image, its price, the
// budget and what to change; beside other work, the *membudget.BusyError.
func reserve(name string, cfg image.Config) (release func(), err error) {
	need := DecodedBytes(cfg)
	release, err = membudget.Reserve("decoding "+name, cfg.Height, cfg.Width, need)
	if me := (*membudget.Error)(nil); errors.As(err, &me) {
		return nil, &fault.InputError{File: name, Msg: fmt.Sprintf("decoding and preprocessing the image (%s) takes %s, over the matrix memory budget of %s; downsample the images, or raise {%s} (MiB) on a machine with the memory",
			describe(cfg), membudget.FormatBytes(need), membudget.FormatBytes(me.Limit), membudget.Field), Err: err}
	}
	return release, err
}
