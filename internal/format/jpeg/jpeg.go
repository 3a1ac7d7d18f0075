package jpeg

import (
	"bufio"
	"fmt"
	"image"
	"image/color"
	"io"
)

// ColorSpace is the colour space of the coded components, as libjpeg-turbo
// infers it from the markers and component identifiers.
type ColorSpace int

// The colour spaces a JPEG file can carry.
const (
	Gray  ColorSpace = iota + 1 // one component
	YCbCr                       // three components, JFIF
	RGB                         // three components coded without a colour transform
	CMYK                        // four components coded without a colour transform
	YCCK                        // four components, Adobe transform 2
)

func (c ColorSpace) String() string {
	switch c {
	case Gray:
		return "Gray"
	case YCbCr:
		return "YCbCr"
	case RGB:
		return "RGB"
	case CMYK:
		return "CMYK"
	case YCCK:
		return "YCCK"
	}
	return fmt.Sprintf("ColorSpace(%d)", int(c))
}

// Component describes one coded component of a frame.
type Component struct {
	ID   uint8 // component identifier from the frame header
	H, V int   // horizontal and vertical sampling factors, 1 to 4
}

// Config is what the headers say about an image, read without decoding any
// pixels.
type Config struct {
	Width, Height int
	Components    []Component
	ColorSpace    ColorSpace
	Progressive   bool
	Arithmetic    bool // arithmetic rather than Huffman entropy coding
}

// Pixels returns Width·Height.
func (c Config) Pixels() int64 { return int64(c.Width) * int64(c.Height) }

// Default limits used by Decode and by a zero Options.
const (
	// DefaultMaxPixels is Pillow's decompression-bomb threshold
	// (2·Image.MAX_IMAGE_PIXELS), above which Pillow refuses to open.
	DefaultMaxPixels = 2 * 89478485
	// DefaultMaxScans bounds the work a progressive file can ask for: every
	// scan walks every block of its components. Real encoders write about
	// ten scans.
	DefaultMaxScans = 1000
)

// Options bound the work and memory of a decode. Zero fields take the
// defaults.
type Options struct {
	MaxPixels int64 // refuse images with more pixels than this
	MaxScans  int   // refuse files with more scans than this
}

// RGBImage is an 8-bit RGB image with three bytes per pixel and rows packed
// without padding: pixel (x, y) is Pix[3*(y*Width+x)+0:3]. It implements
// image.Image.
type RGBImage struct {
	Pix           []uint8
	Width, Height int
}

// ColorModel implements image.Image.
func (m *RGBImage) ColorModel() color.Model { return color.RGBAModel }

// Bounds implements image.Image.
func (m *RGBImage) Bounds() image.Rectangle { return image.Rect(0, 0, m.Width, m.Height) }

// At implements image.Image.
func (m *RGBImage) At(x, y int) color.Color {
	if x < 0 || y < 0 || x >= m.Width || y >= m.Height {
		return color.RGBA{}
	}
	p := m.Pix[3*(y*m.Width+x):]
	return color.RGBA{p[0], p[1], p[2], 0xff}
}

// Decode reads a JPEG image from r with the default Options.
func Decode(r io.Reader) (*RGBImage, error) {
	return DecodeWith(r, Options{})
}

// DecodeWith reads a JPEG image from r within the limits of o. It reads all
// of r into memory and ignores what follows the EOI marker. Besides the
// input, it allocates 3 bytes per pixel for the result, about one byte per
// sample of each component, and for progressive and multi-scan files two
// bytes per DCT coefficient until the last scan is read.
func DecodeWith(r io.Reader, o Options) (*RGBImage, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("jpeg: reading: %w", err)
	}
	return decodeBytes(data, o)
}

// DecodeConfig reads the headers of a JPEG image up to its first scan, so a
// caller can check the size before decoding. It reads no entropy-coded data.
func DecodeConfig(r io.Reader) (Config, error) {
	rd, ok := r.(byteReader)
	if !ok {
		rd = bufio.NewReaderSize(r, 4096)
	}
	d := newDecoder(Options{MaxPixels: 1 << 62, MaxScans: 1 << 30})
	if err := d.readHeaderStream(rd); err != nil {
		return Config{}, err
	}
	return d.config(), nil
}

type byteReader interface {
	io.Reader
	io.ByteReader
}
