// Package pnm reads binary PGM (P5) and PPM (P6) files as Pillow 9.4
// reads them, so that Image.open(f).convert("RGB") and Decode followed by
// PIL's conversion give the same pixels.
//
// The header is tokenised as Pillow's PpmImagePlugin does: tokens are
// separated by ASCII whitespace (space, tab, LF, VT, FF, CR), a '#' starts
// a comment that runs to the next CR or LF and does not end the token it
// interrupts, a token is at most 10 bytes, and the single whitespace byte
// after the maxval is the last byte of the header. Numbers are read as
// Python's int() reads them (an optional sign, digits, single underscores
// between digits). maxval must be in 1..65535.
//
// Samples are one byte when maxval < 256 and two (big-endian) otherwise.
// Pillow keeps 8-bit files with maxval 255 as they are and rescales every
// other maxval: to 0..255 for PPM and for PGM with maxval < 256 (mode
// "L"), to 0..65535 for PGM with maxval > 255 (mode "I"), each value
// round(v/maxval·max) in float64 with ties to even, capped at the maximum
// (a sample may exceed maxval). Decode returns the rescaled values: an
// *image.Gray for PGM with maxval < 256, an *image.Gray16 for wider PGM
// (whose conversion to RGB then clips at 255, as PIL's "I" to "RGB"
// does), and an opaque *image.RGBA for PPM.
//
// A file with fewer samples than its header declares is refused, as
// Pillow refuses it; bytes after the last sample are ignored. The plain
// (ASCII) variants P1, P2 and P3 and the bitmaps of P4 are not read.
package pnm

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"image"
	"io"
	"math"
)

// Config is what the header of a PGM or PPM file says.
type Config struct {
	Width, Height int
	Channels      int // 1 for PGM (P5), 3 for PPM (P6)
	MaxVal        int // 1..65535
}

// Pixels returns Width·Height.
func (c Config) Pixels() int64 { return int64(c.Width) * int64(c.Height) }

// DefaultMaxPixels is the pixel count Decode allows with a zero Options:
// Pillow's decompression-bomb threshold (2·Image.MAX_IMAGE_PIXELS).
const DefaultMaxPixels = 2 * 89478485

// Options bound the work and memory of a decode; zero fields take the
// defaults.
type Options struct {
	MaxPixels int64 // refuse images with more pixels than this
}

func isSpace(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\v', '\f', '\r':
		return true
	}
	return false
}

// header reads the magic number and the three numbers after it, leaving r
// at the first sample.
func header(r io.ByteReader) (Config, error) {
	// Pillow reads up to 6 bytes of magic, stopping at whitespace.
	var magic []byte
	for range 6 {
		c, err := r.ReadByte()
		if err != nil || isSpace(c) {
			break
		}
		magic = append(magic, c)
	}
	var c Config
	switch string(magic) {
	case "P5":
		c.Channels = 1
	case "P6":
		c.Channels = 3
	case "P1", "P2", "P3", "P4":
		return Config{}, fmt.Errorf("pnm: %s files (plain or bitmap) are not read, only binary PGM (P5) and PPM (P6)", magic)
	default:
		return Config{}, errors.New("pnm: not a binary PGM or PPM file")
	}
	for i, name := range []string{"width", "height", "maxval"} {
		tok, err := token(r)
		if err != nil {
			return Config{}, err
		}
		v, ok := pyInt(tok)
		if !ok {
			return Config{}, fmt.Errorf("pnm: %s %q is not a number", name, tok)
		}
		switch i {
		case 0:
			c.Width = v
		case 1:
			c.Height = v
		case 2:
			c.MaxVal = v
		}
	}
	if c.MaxVal < 1 || c.MaxVal > 65535 {
		return Config{}, fmt.Errorf("pnm: maxval %d is not in 1..65535", c.MaxVal)
	}
	if c.Width < 1 || c.Height < 1 {
		return Config{}, fmt.Errorf("pnm: declares an empty %dx%d image", c.Width, c.Height)
	}
	return c, nil
}

// token reads one header token as Pillow's _read_token does.
func token(r io.ByteReader) ([]byte, error) {
	var tok []byte
	for len(tok) <= 10 {
		c, err := r.ReadByte()
		if err != nil {
			break
		}
		if isSpace(c) {
			if len(tok) == 0 {
				continue
			}
			break
		}
		if c == '#' {
			for {
				c, err := r.ReadByte()
				if err != nil || c == '\r' || c == '\n' {
					break
				}
			}
			continue
		}
		tok = append(tok, c)
	}
	if len(tok) == 0 {
		return nil, errors.New("pnm: header ends early")
	}
	if len(tok) > 10 {
		return nil, fmt.Errorf("pnm: header token %q is too long", tok)
	}
	return tok, nil
}

// pyInt parses b as Python's int(b) does for the short tokens of a
// header: optional sign, then digits with single underscores between
// them. Values beyond 10 digits cannot occur (tokens are short).
func pyInt(b []byte) (int, bool) {
	neg := false
	if len(b) > 0 && (b[0] == '+' || b[0] == '-') {
		neg = b[0] == '-'
		b = b[1:]
	}
	if len(b) == 0 || b[0] == '_' || b[len(b)-1] == '_' {
		return 0, false
	}
	v := 0
	for i, c := range b {
		switch {
		case c >= '0' && c <= '9':
			v = 10*v + int(c-'0')
		case c == '_' && b[i-1] != '_':
		default:
			return 0, false
		}
	}
	if neg {
		v = -v
	}
	return v, true
}

type byteReader interface {
	io.Reader
	io.ByteReader
}

func reader(r io.Reader) byteReader {
	if br, ok := r.(byteReader); ok {
		return br
	}
	return bufio.NewReaderSize(r, 4096)
}

// DecodeConfig reads the header of a binary PGM or PPM file.
func DecodeConfig(r io.Reader) (Config, error) {
	return header(reader(r))
}

// Decode reads a binary PGM or PPM file with the default Options.
func Decode(r io.Reader) (image.Image, error) { return DecodeWith(r, Options{}) }

// DecodeWith reads a binary PGM or PPM file within the limits of o. The
// samples are read before the image is allocated, with a buffer that
// grows as they arrive, so a short file cannot make it allocate for the
// size its header claims.
func DecodeWith(r io.Reader, o Options) (image.Image, error) {
	if o.MaxPixels <= 0 {
		o.MaxPixels = DefaultMaxPixels
	}
	br := reader(r)
	c, err := header(br)
	if err != nil {
		return nil, err
	}
	if c.Pixels() > o.MaxPixels {
		return nil, fmt.Errorf("pnm: %dx%d image has more than %d pixels", c.Width, c.Height, o.MaxPixels)
	}
	bps := 1
	if c.MaxVal > 255 {
		bps = 2
	}
	need := c.Pixels() * int64(c.Channels*bps)
	var buf bytes.Buffer
	if n, err := io.CopyN(&buf, br, need); err != nil {
		if err == io.EOF {
			return nil, fmt.Errorf("pnm: truncated: %d of the %d bytes of samples", n, need)
		}
		return nil, fmt.Errorf("pnm: reading: %w", err)
	}
	data := buf.Bytes()
	rect := image.Rect(0, 0, c.Width, c.Height)
	sample := func(i int) int {
		if bps == 1 {
			return int(data[i])
		}
		return int(data[2*i])<<8 | int(data[2*i+1])
	}
	switch {
	case c.Channels == 1 && c.MaxVal < 256:
		m := image.NewGray(rect)
		if c.MaxVal == 255 {
			copy(m.Pix, data)
			return m, nil
		}
		lut := scaleTable(c.MaxVal, 255)
		for i := range m.Pix {
			m.Pix[i] = uint8(lut[data[i]])
		}
		return m, nil
	case c.Channels == 1:
		m := image.NewGray16(rect)
		for i := range len(m.Pix) / 2 {
			v := sample(i)
			if c.MaxVal != 65535 {
				v = scale(v, c.MaxVal, 65535)
			}
			m.Pix[2*i], m.Pix[2*i+1] = uint8(v>>8), uint8(v)
		}
		return m, nil
	default:
		m := image.NewRGBA(rect)
		var lut []uint16
		if bps == 1 {
			lut = scaleTable(c.MaxVal, 255)
		}
		n := c.Width * c.Height
		for i := range n {
			p := m.Pix[4*i : 4*i+4]
			for k := range 3 {
				v := sample(3*i + k)
				switch {
				case c.MaxVal == 255:
				case lut != nil:
					v = int(lut[v])
				default:
					v = scale(v, c.MaxVal, 255)
				}
				p[k] = uint8(v)
			}
			p[3] = 0xff
		}
		return m, nil
	}
}

// scale is Pillow's min(out, round(v / maxval * out)): float64 division
// and product, rounded half to even.
func scale(v, maxval, out int) int {
	return min(out, int(math.RoundToEven(float64(v)/float64(maxval)*float64(out))))
}

// scaleTable returns scale for every one-byte sample.
func scaleTable(maxval, out int) []uint16 {
	t := make([]uint16, 256)
	for v := range t {
		t[v] = uint16(scale(v, maxval, out))
	}
	return t
}
