package features

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"io/fs"
	"strings"

	"golang.org/x/image/bmp"
	"golang.org/x/image/tiff"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/format/jpeg"
	"github.com/genlens/genlens/internal/format/pnm"
	"github.com/genlens/genlens/internal/format/webp"
	"github.com/genlens/genlens/internal/tensor/membudget"
)

// MaxImagePixels bounds the width × height an image file may declare: its
// header is read first, so that a small file claiming a huge image is
// refused instead of exhausting memory.
const MaxImagePixels = 1 << 24

// formatList names the formats DecodeImage reads, for error messages.
const formatList = "png, jpeg, bmp, tiff, webp, ppm, pgm"

// DecodeImage decodes the image file name of fsys, in any supported format
// (png, jpeg, bmp, tiff, webp, binary ppm and pgm), to an image whose
// ToRGB is what PIL's Image.open(f).convert("RGB") returns. The format is
// told by the file's first bytes, not its name. It refuses what is not a
// regular file before opening it, and reads the header first so that an
// image declaring more than MaxImagePixels pixels (a 69-byte PNG can
// claim 100000×100000) is refused before any pixel buffer is allocated,
// and a JPEG of more scans than its size allows (MaxJPEGScans for small
// images, fewer for large ones) before it is decoded.
//
// JPEG files are decoded by package internal/format/jpeg, bit for bit as
// libjpeg-turbo decodes them for Pillow; WebP by package
// internal/format/webp (libwebp's upsampling and colour conversion for
// lossy files); PGM and PPM by package internal/format/pnm; PNG, BMP and
// TIFF by the Go decoders, with PIL's readings where they differ (a
// palette index past the PNG palette is grey, not black).
func DecodeImage(fsys fs.FS, name string) (image.Image, error) {
	return decodeImage(fsys, name, nil)
}

// decodeImage is DecodeImage calling admit, when not nil, with the
// image's header once it is checked and before any pixel is decoded.
func decodeImage(fsys fs.FS, name string, admit func(cfg image.Config) error) (image.Image, error) {
	st, h, err := checkHeader(fsys, name)
	if err != nil {
		return nil, err
	}
	open := func() (fs.File, error) {
		f, err := fsys.Open(name)
		if err != nil {
			return nil, &fault.InputError{File: name, Msg: "cannot read: " + dataio.Cause(err), Err: err}
		}
		return f, nil
	}
	pixels := int64(h.width) * int64(h.height)
	if admit != nil {
		if err := admit(image.Config{ColorModel: h.model, Width: h.width, Height: h.height}); err != nil {
			return nil, err
		}
	}
	// Files need not seek (an upload, an fstest.MapFS), so open again
	// rather than rewind.
	f, err := open()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var img image.Image
	if h.format == "jpeg" {
		// The decoder reads the whole file anyway: read it once, count
		// its scans (decoding work grows with them as well as with the
		// pixels), then decode from memory.
		data, rerr := readAll(f, st.Size())
		if rerr != nil {
			return nil, &fault.InputError{File: name, Msg: "cannot read: " + dataio.Cause(rerr), Err: rerr}
		}
		limit := jpegScanLimit(pixels)
		if _, serr := jpegScans(data, limit); serr != nil {
			return nil, &fault.InputError{File: name, Msg: "JPEG with " + serr.Error(), Err: serr}
		}
		img, err = decodeAs(h, bytes.NewReader(data), limit)
	} else {
		img, err = decodeAs(h, bufio.NewReaderSize(f, 64<<10), 0)
	}
	if err != nil {
		msg := err.Error()
		// The decoders prefix their name; the message names the format.
		if i := strings.Index(msg, ": "); i > 0 && i < 8 && !strings.Contains(msg[:i], " ") {
			msg = msg[i+2:]
		}
		return nil, &fault.InputError{File: name, Msg: "not a valid " + h.name() + " file: " + msg, Err: err}
	}
	if b := img.Bounds(); b.Dx() != h.width || b.Dy() != h.height {
		// The size checked above must be the size decoded.
		return nil, &fault.InputError{File: name, Msg: fmt.Sprintf("not a valid %s file: its header says %dx%d, its data %dx%d", h.name(), h.width, h.height, b.Dx(), b.Dy())}
	}
	return img, nil
}

// checkHeader refuses what is not a regular file, reads the header of
// the image file name and refuses an empty image or one of more than
// MaxImagePixels pixels.
func checkHeader(fsys fs.FS, name string) (fs.FileInfo, header, error) {
	st, err := fs.Stat(fsys, name)
	if err != nil {
		return nil, header{}, &fault.InputError{File: name, Msg: "cannot read: " + dataio.Cause(err), Err: err}
	}
	if !st.Mode().IsRegular() {
		return nil, header{}, &fault.InputError{File: name, Msg: "is not a regular file (" + st.Mode().Type().String() + ")"}
	}
	f, err := fsys.Open(name)
	if err != nil {
		return nil, header{}, &fault.InputError{File: name, Msg: "cannot read: " + dataio.Cause(err), Err: err}
	}
	h, err := readHeader(bufio.NewReaderSize(f, 4096))
	f.Close()
	if err != nil {
		return nil, header{}, &fault.InputError{File: name, Msg: "not a readable image (" + formatList + "): " + err.Error(), Err: err}
	}
	if h.width < 1 || h.height < 1 {
		return nil, header{}, &fault.InputError{File: name, Msg: fmt.Sprintf("declares an empty %dx%d image", h.width, h.height)}
	}
	if int64(h.width)*int64(h.height) > MaxImagePixels {
		return nil, header{}, &fault.InputError{File: name, Msg: fmt.Sprintf("declares a %dx%d image, more than the %d pixels genlens reads; downsample the images", h.width, h.height, MaxImagePixels)}
	}
	return st, h, nil
}

// ImageConfig reads the header of the image file name of fsys, with the
// checks DecodeImage makes before decoding it: its width and height, and
// a colour model that is the decoder's for PNG files (Gray or Gray16 for
// grey ones) and, for other formats, a model of the size of what
// decoding takes (so that DecodedBytes prices it).
func ImageConfig(fsys fs.FS, name string) (image.Config, error) {
	_, h, err := checkHeader(fsys, name)
	if err != nil {
		return image.Config{}, err
	}
	return image.Config{ColorModel: h.model, Width: h.width, Height: h.height}, nil
}

// DecodeImageReserved is DecodeImage admitting the image through
// membudget.Reserve at its price (DecodedBytes) before its pixels are
// decoded: over the budget alone it is an *fault.InputError naming the
// image, its price and what to change. The caller calls release once it
// no longer holds the image (release is nil on an error).
func DecodeImageReserved(fsys fs.FS, name string) (img image.Image, release func(), err error) {
	img, err = decodeImage(fsys, name, func(cfg image.Config) (err error) {
		release, err = reserve(name, cfg)
		return err
	})
	if err != nil {
		if release != nil {
			release()
		}
		return nil, nil, err
	}
	return img, release, nil
}

// readAll reads r to its end into a buffer of size (the file's size,
// as stat gave it) plus what it turns out to hold beyond.
func readAll(r io.Reader, size int64) ([]byte, error) {
	var b bytes.Buffer
	if size > 0 && size < 1<<31 {
		b.Grow(int(size) + 1)
	}
	_, err := b.ReadFrom(r)
	return b.Bytes(), err
}

// header is what DecodeImage learns from a file before decoding it.
type header struct {
	format        string // jpeg, png, bmp, tiff, webp, pnm
	width, height int
	// PNG only: IHDR's colour type and bit depth and the entries of PLTE.
	pngColorType, pngDepth, pngPalette int
	// model is the colour model of what the decoder returns, or a model
	// of its size (see pixelBytes), which prices the decoding.
	model color.Model
}

// name is the format as error messages spell it.
func (h header) name() string {
	if h.format == "pnm" {
		return "ppm/pgm"
	}
	return h.format
}

// sniff names the format of a file from its first bytes, "" for none.
func sniff(b []byte) string {
	switch {
	case len(b) >= 3 && b[0] == 0xff && b[1] == 0xd8 && b[2] == 0xff:
		return "jpeg"
	case bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")):
		return "png"
	case bytes.HasPrefix(b, []byte("BM")):
		return "bmp"
	case bytes.HasPrefix(b, []byte("II*\x00")), bytes.HasPrefix(b, []byte("MM\x00*")):
		return "tiff"
	case len(b) >= 12 && string(b[:4]) == "RIFF" && string(b[8:12]) == "WEBP":
		return "webp"
	case len(b) >= 2 && b[0] == 'P' && b[1] >= '1' && b[1] <= '6':
		return "pnm"
	}
	return ""
}

// readHeader reads the format and size of an image from r.
func readHeader(r *bufio.Reader) (header, error) {
	b, _ := r.Peek(16)
	h := header{format: sniff(b)}
	switch h.format {
	case "jpeg":
		c, err := jpeg.DecodeConfig(r)
		if err != nil {
			return h, err
		}
		h.width, h.height = c.Width, c.Height
		// Packed RGB and the components' sample planes (4 bytes a pixel);
		// a progressive file also keeps every coefficient until its
		// last scan (priced as 8).
		h.model = color.RGBAModel
		if c.Progressive {
			h.model = color.RGBA64Model
		}
	case "pnm":
		c, err := pnm.DecodeConfig(r)
		if err != nil {
			return h, err
		}
		h.width, h.height = c.Width, c.Height
		h.model = map[[2]bool]color.Model{{false, false}: color.GrayModel, {false, true}: color.Gray16Model,
			{true, false}: color.RGBAModel, {true, true}: color.RGBA64Model}[[2]bool{c.Channels == 3, c.MaxVal > 255}]
	case "webp":
		c, err := webp.DecodeConfig(r)
		if err != nil {
			return h, err
		}
		h.width, h.height = c.Width, c.Height
		h.model = color.NRGBAModel
	case "png":
		err := readPNGHeader(r, &h)
		h.model = pngModel(h.pngColorType, h.pngDepth)
		return h, err
	case "bmp", "tiff":
		dc := bmp.DecodeConfig
		if h.format == "tiff" {
			dc = tiff.DecodeConfig
		}
		c, err := dc(r)
		if err != nil {
			return h, err
		}
		h.width, h.height, h.model = c.Width, c.Height, c.ColorModel
	default:
		return h, errors.New("unknown format")
	}
	return h, nil
}

// pngModel is the colour model Go's PNG decoder returns for IHDR's
// colour type and bit depth.
func pngModel(colorType, depth int) color.Model {
	wide := depth == 16
	switch colorType {
	case 0:
		if wide {
			return color.Gray16Model
		}
		return color.GrayModel
	case 3:
		return color.Palette{}
	case 2, 4, 6:
		if wide {
			return color.NRGBA64Model
		}
		return color.NRGBAModel
	}
	return color.NRGBA64Model // unknown: priced as the largest
}

// readPNGHeader reads the IHDR chunk and walks the chunks up to the first
// IDAT to count the palette entries: PIL reads a palette index past them
// as grey (index i is (i, i, i)), where Go's decoder gives black.
func readPNGHeader(r *bufio.Reader, h *header) error {
	if _, err := r.Discard(8); err != nil {
		return err
	}
	for first := true; ; first = false {
		var ch [8]byte
		if _, err := io.ReadFull(r, ch[:]); err != nil {
			return errors.New("png: truncated before the image data")
		}
		n, typ := binary.BigEndian.Uint32(ch[:4]), string(ch[4:])
		if first != (typ == "IHDR") {
			return errors.New("png: IHDR is not the first chunk")
		}
		if n > 1<<31-1 {
			return errors.New("png: chunk length too large")
		}
		switch typ {
		case "IHDR":
			var d [13]byte
			if n != 13 {
				return errors.New("png: invalid IHDR length")
			}
			if _, err := io.ReadFull(r, d[:]); err != nil {
				return errors.New("png: truncated IHDR")
			}
			w, ht := binary.BigEndian.Uint32(d[0:4]), binary.BigEndian.Uint32(d[4:8])
			if w > 1<<31-1 || ht > 1<<31-1 {
				return errors.New("png: dimension overflow")
			}
			h.width, h.height = int(w), int(ht)
			h.pngDepth, h.pngColorType = int(d[8]), int(d[9])
			n = 0
		case "PLTE":
			h.pngPalette = int(n / 3)
		case "IDAT":
			return nil
		}
		if _, err := r.Discard(int(n) + 4); err != nil { // data and CRC
			return errors.New("png: truncated before the image data")
		}
	}
}

// decodeAs decodes the image r holds, of the format and size h says.
func decodeAs(h header, r io.Reader, scans int) (image.Image, error) {
	switch h.format {
	case "jpeg":
		m, err := jpeg.DecodeWith(r, jpeg.Options{MaxPixels: MaxImagePixels, MaxScans: scans})
		if err != nil {
			return nil, err
		}
		return m, nil
	case "pnm":
		return pnm.DecodeWith(r, pnm.Options{MaxPixels: MaxImagePixels})
	case "webp":
		m, err := webp.Decode(r)
		if err != nil {
			return nil, err
		}
		return m, nil
	case "bmp":
		return bmp.Decode(r)
	case "tiff":
		return tiff.Decode(r)
	case "png":
		m, err := png.Decode(r)
		if err != nil {
			return nil, err
		}
		return pilPNG(m, h), nil
	}
	return nil, errors.New("unknown format")
}

// pilPNG makes what Go's PNG decoder returns read as PIL reads the file:
// palette indices past the PLTE entries are grey, and 16-bit greyscale
// with a transparent colour is PIL's mode "I" (clipped to 255 in RGB),
// not 16-bit colour whose high byte would be kept.
func pilPNG(m image.Image, h header) image.Image {
	switch m := m.(type) {
	case *image.Paletted:
		for i := h.pngPalette; i < len(m.Palette); i++ {
			m.Palette[i] = color.Gray{Y: uint8(i)}
		}
	case *image.NRGBA64:
		if h.pngColorType == 0 {
			g := image.NewGray16(m.Rect)
			for y := m.Rect.Min.Y; y < m.Rect.Max.Y; y++ {
				src := m.Pix[m.PixOffset(m.Rect.Min.X, y):][:8*m.Rect.Dx()]
				dst := g.Pix[g.PixOffset(m.Rect.Min.X, y):][:2*m.Rect.Dx()]
				for x := range m.Rect.Dx() {
					dst[2*x], dst[2*x+1] = src[8*x], src[8*x+1]
				}
			}
			return g
		}
	}
	return m
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
