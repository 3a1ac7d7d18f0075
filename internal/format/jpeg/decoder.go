package jpeg

import (
	"fmt"
	"io"
)

// Marker codes (the byte after 0xFF).
const (
	mSOF0 = 0xc0 // baseline
	mSOF1 = 0xc1 // extended sequential, Huffman
	mSOF2 = 0xc2 // progressive, Huffman
	mSOF3 = 0xc3 // lossless
	mDHT  = 0xc4
	mSOF9 = 0xc9 // extended sequential, arithmetic
	mSOFA = 0xca // progressive, arithmetic
	mDAC  = 0xcc
	mRST0 = 0xd0
	mRST7 = 0xd7
	mSOI  = 0xd8
	mEOI  = 0xd9
	mSOS  = 0xda
	mDQT  = 0xdb
	mDNL  = 0xdc
	mDRI  = 0xdd
	mAPP0 = 0xe0
	mAPPE = 0xee
	mAPPF = 0xef
	mCOM  = 0xfe
	mTEM  = 0x01
)

// zigzag[i] is the natural (row-major) index of the i-th coefficient in
// zigzag order. The extra entries let a corrupt run index past 63 safely
// until the caller rejects it.
var zigzag = [64 + 16]uint8{
	0, 1, 8, 16, 9, 2, 3, 10,
	17, 24, 32, 25, 18, 11, 4, 5,
	12, 19, 26, 33, 40, 48, 41, 34,
	27, 20, 13, 6, 7, 14, 21, 28,
	35, 42, 49, 56, 57, 50, 43, 36,
	29, 22, 15, 23, 30, 37, 44, 51,
	58, 59, 52, 45, 38, 31, 39, 46,
	53, 60, 61, 54, 47, 55, 62, 63,
	63, 63, 63, 63, 63, 63, 63, 63,
	63, 63, 63, 63, 63, 63, 63, 63,
}

type component struct {
	id     uint8
	h, v   int
	tq     uint8
	td, ta uint8 // entropy table selectors of the current scan

	cw, ch   int // size in samples after downsampling
	bw, bh   int // blocks covering cw×ch
	hr, vr   int // upsampling ratios maxH/h, maxV/v
	qt       [64]int32
	latched  bool // qt has been copied from the DQT table
	seen     bool // appeared in a scan
	coef     []int16
	plane    []byte // bw*8 × bh*8 samples
	stride   int
	coefBits [64]int8 // progressive: lowest bit known of each coefficient, -1 none
	pred     int32    // DC predictor
}

type decoder struct {
	opt  Options
	data []byte
	pos  int

	width, height int
	ncomp         int
	comps         [4]component
	maxH, maxV    int
	mcusX, mcusY  int
	sof           byte
	progressive   bool
	arithmetic    bool
	started       bool // first SOS seen: geometry fixed, buffers allocated
	buffered      bool // coefficients are kept until the end
	colorSpace    ColorSpace

	jfif           bool
	adobe          bool
	adobeTransform uint8

	qt      [4]*[64]uint16 // natural order
	dc, ac  [4]*huffTable
	arithDC [16]uint8 // DAC conditioning: L | U<<4
	arithAC [16]uint8 // DAC conditioning: Kx
	dri     int

	scans int
	eoi   bool
}

func newDecoder(o Options) *decoder {
	d := &decoder{opt: o.withDefaults()}
	// The conditioning defaults of T.81 F.1.4.4: L=0, U=1, Kx=5.
	for i := range d.arithDC {
		d.arithDC[i] = 1 << 4
		d.arithAC[i] = 5
	}
	return d
}

func (o Options) withDefaults() Options {
	if o.MaxPixels <= 0 {
		o.MaxPixels = DefaultMaxPixels
	}
	if o.MaxScans <= 0 {
		o.MaxScans = DefaultMaxScans
	}
	return o
}

func (d *decoder) config() Config {
	c := Config{
		Width:       d.width,
		Height:      d.height,
		ColorSpace:  d.colorSpace,
		Progressive: d.progressive,
		Arithmetic:  d.arithmetic,
	}
	for i := 0; i < d.ncomp; i++ {
		c.Components = append(c.Components, Component{ID: d.comps[i].id, H: d.comps[i].h, V: d.comps[i].v})
	}
	return c
}

// readHeaderStream parses the segments of r up to the first SOS, for
// DecodeConfig.
func (d *decoder) readHeaderStream(r byteReader) error {
	var soi [2]byte
	if _, err := io.ReadFull(r, soi[:]); err != nil || soi[0] != 0xff || soi[1] != mSOI {
		return fmt.Errorf("jpeg: not a JPEG file (no SOI marker)")
	}
	for {
		b, err := r.ReadByte()
		if err != nil {
			return errTruncatedHeader
		}
		if b != 0xff {
			return fmt.Errorf("jpeg: no marker found where one was expected")
		}
		m := byte(0xff)
		for m == 0xff {
			if m, err = r.ReadByte(); err != nil {
				return errTruncatedHeader
			}
		}
		if m == 0 || m == mTEM || (m >= mRST0 && m <= mRST7) {
			continue
		}
		if m == mEOI || m == mSOI {
			return fmt.Errorf("jpeg: marker %s before the first scan", markerName(m))
		}
		var lb [2]byte
		if _, err := io.ReadFull(r, lb[:]); err != nil {
			return errTruncatedHeader
		}
		n := int(lb[0])<<8 | int(lb[1])
		if n < 2 {
			return fmt.Errorf("jpeg: bad length %d in %s segment", n, markerName(m))
		}
		p := make([]byte, n-2)
		if _, err := io.ReadFull(r, p); err != nil {
			return errTruncatedHeader
		}
		if m == mSOS {
			if !d.started {
				if err := d.startFrame(); err != nil {
					return err
				}
			}
			return nil
		}
		if err := d.segment(m, p); err != nil {
			return err
		}
	}
}

func markerName(m byte) string {
	switch {
	case m == mSOI:
		return "SOI"
	case m == mEOI:
		return "EOI"
	case m == mSOS:
		return "SOS"
	case m == mDHT:
		return "DHT"
	case m == mDQT:
		return "DQT"
	case m == mDRI:
		return "DRI"
	case m == mDAC:
		return "DAC"
	case m >= 0xc0 && m <= 0xcf:
		return fmt.Sprintf("SOF%d", m-0xc0)
	case m >= mRST0 && m <= mRST7:
		return fmt.Sprintf("RST%d", m-mRST0)
	case m >= mAPP0 && m <= mAPPF:
		return fmt.Sprintf("APP%d", m-mAPP0)
	case m == mCOM:
		return "COM"
	}
	return fmt.Sprintf("0xFF%02X", m)
}

// segment handles a marker segment other than SOS.
func (d *decoder) segment(m byte, p []byte) error {
	switch {
	case m == mSOF0 || m == mSOF1 || m == mSOF2 || m == mSOF9 || m == mSOFA:
		return d.readSOF(m, p)
	case m == mSOF3 || m == 0xc7 || m == 0xcb || m == 0xcf:
		return fmt.Errorf("jpeg: lossless JPEG (%s) is not supported", markerName(m))
	case m == 0xc5 || m == 0xc6 || m == 0xcd || m == 0xce:
		return fmt.Errorf("jpeg: hierarchical JPEG (%s) is not supported", markerName(m))
	case m == mDHT:
		return d.readDHT(p)
	case m == mDQT:
		return d.readDQT(p)
	case m == mDRI:
		if len(p) != 2 {
			return fmt.Errorf("jpeg: bad DRI length")
		}
		d.dri = int(p[0])<<8 | int(p[1])
		return nil
	case m == mDAC:
		return d.readDAC(p)
	case m == mAPP0:
		// libjpeg-turbo notes JFIF only from a full-length APP0.
		if len(p) >= 14 && string(p[:5]) == "JFIF\x00" {
			d.jfif = true
		}
		return nil
	case m == mAPPE:
		if len(p) >= 12 && string(p[:5]) == "Adobe" {
			d.adobe = true
			d.adobeTransform = p[11]
		}
		return nil
	case m >= mAPP0 && m <= mAPPF, m == mCOM, m == mDNL:
		return nil
	}
	return fmt.Errorf("jpeg: unknown marker %s", markerName(m))
}

func (d *decoder) readSOF(m byte, p []byte) error {
	if d.sof != 0 {
		return fmt.Errorf("jpeg: more than one frame header")
	}
	if len(p) < 6 {
		return fmt.Errorf("jpeg: bad %s length", markerName(m))
	}
	if p[0] != 8 {
		return fmt.Errorf("jpeg: %d-bit samples are not supported (8-bit only)", p[0])
	}
	d.height = int(p[1])<<8 | int(p[2])
	d.width = int(p[3])<<8 | int(p[4])
	n := int(p[5])
	if d.height == 0 || d.width == 0 || n == 0 {
		return fmt.Errorf("jpeg: empty image (%dx%d, %d components)", d.width, d.height, n)
	}
	if len(p) != 6+3*n {
		return fmt.Errorf("jpeg: bad %s length", markerName(m))
	}
	if n != 1 && n != 3 && n != 4 {
		return fmt.Errorf("jpeg: %d-component images are not supported", n)
	}
	// libjpeg-turbo's JPEG_MAX_DIMENSION.
	if d.width > 65500 || d.height > 65500 {
		return fmt.Errorf("jpeg: image too large (%dx%d)", d.width, d.height)
	}
	d.sof = m
	d.ncomp = n
	d.progressive = m == mSOF2 || m == mSOFA
	d.arithmetic = m == mSOF9 || m == mSOFA
	for i := 0; i < n; i++ {
		c := &d.comps[i]
		c.id = p[6+3*i]
		c.h = int(p[7+3*i] >> 4)
		c.v = int(p[7+3*i] & 15)
		c.tq = p[8+3*i]
		if c.h < 1 || c.h > 4 || c.v < 1 || c.v > 4 {
			return fmt.Errorf("jpeg: bad sampling factors %dx%d", c.h, c.v)
		}
	}
	return nil
}

func (d *decoder) readDQT(p []byte) error {
	for len(p) > 0 {
		prec, id := p[0]>>4, p[0]&15
		if id > 3 {
			return fmt.Errorf("jpeg: bad DQT table index %d", id)
		}
		n := 64
		if prec != 0 {
			n = 128
		}
		if len(p) < 1+n {
			return fmt.Errorf("jpeg: bad DQT length")
		}
		t := new([64]uint16)
		for i := 0; i < 64; i++ {
			var q uint16
			if prec != 0 {
				q = uint16(p[1+2*i])<<8 | uint16(p[2+2*i])
			} else {
				q = uint16(p[1+i])
			}
			t[zigzag[i]] = q
		}
		d.qt[id] = t
		p = p[1+n:]
	}
	return nil
}

func (d *decoder) readDHT(p []byte) error {
	for len(p) > 0 {
		if len(p) < 17 {
			return fmt.Errorf("jpeg: bad DHT length")
		}
		class, id := p[0]>>4, p[0]&15
		if class > 1 || id > 3 {
			return fmt.Errorf("jpeg: bad DHT table index 0x%02x", p[0])
		}
		var counts [16]uint8
		copy(counts[:], p[1:17])
		n := 0
		for _, c := range counts {
			n += int(c)
		}
		if n > 256 || len(p) < 17+n {
			return fmt.Errorf("jpeg: bad DHT length")
		}
		t, err := buildHuff(&counts, p[17:17+n], class == 0)
		if err != nil {
			return err
		}
		if class == 0 {
			d.dc[id] = t
		} else {
			d.ac[id] = t
		}
		p = p[17+n:]
	}
	return nil
}

func (d *decoder) readDAC(p []byte) error {
	if len(p)%2 != 0 {
		return fmt.Errorf("jpeg: bad DAC length")
	}
	for ; len(p) > 0; p = p[2:] {
		idx, val := p[0], p[1]
		if idx >= 32 {
			return fmt.Errorf("jpeg: bad DAC index %d", idx)
		}
		if idx >= 16 {
			if val < 1 || val > 63 {
				return fmt.Errorf("jpeg: bad DAC value %d", val)
			}
			d.arithAC[idx-16] = val
		} else {
			l, u := val&15, val>>4
			if l > u {
				return fmt.Errorf("jpeg: bad DAC value 0x%02x", val)
			}
			d.arithDC[idx] = val
		}
	}
	return nil
}

// startFrame fixes the geometry and colour space at the first SOS, as
// jpeg_read_header does, and checks the limits.
func (d *decoder) startFrame() error {
	if d.sof == 0 {
		return fmt.Errorf("jpeg: scan before frame header")
	}
	d.started = true
	for i := 0; i < d.ncomp; i++ {
		c := &d.comps[i]
		d.maxH = max(d.maxH, c.h)
		d.maxV = max(d.maxV, c.v)
	}
	d.mcusX = ceilDiv(d.width, 8*d.maxH)
	d.mcusY = ceilDiv(d.height, 8*d.maxV)
	for i := 0; i < d.ncomp; i++ {
		c := &d.comps[i]
		c.cw = ceilDiv(d.width*c.h, d.maxH)
		c.ch = ceilDiv(d.height*c.v, d.maxV)
		c.bw = ceilDiv(c.cw, 8)
		c.bh = ceilDiv(c.ch, 8)
		c.hr = d.maxH / c.h
		c.vr = d.maxV / c.v
		// libjpeg-turbo upsamples integral ratios only.
		if d.maxH%c.h != 0 || d.maxV%c.v != 0 {
			return fmt.Errorf("jpeg: fractional sampling factors (%dx%d in a %dx%d frame) are not supported",
				c.h, c.v, d.maxH, d.maxV)
		}
		for j := 0; j < 64; j++ {
			c.coefBits[j] = -1
		}
	}
	switch d.ncomp {
	case 1:
		d.colorSpace = Gray
	case 3:
		d.colorSpace = YCbCr
		if !d.jfif {
			if d.adobe {
				if d.adobeTransform == 0 {
					d.colorSpace = RGB
				}
			} else if d.comps[0].id == 'R' && d.comps[1].id == 'G' && d.comps[2].id == 'B' {
				d.colorSpace = RGB
			}
		}
	case 4:
		d.colorSpace = CMYK
		if d.adobe && d.adobeTransform != 0 {
			d.colorSpace = YCCK
		}
	}
	if px := int64(d.width) * int64(d.height); px > d.opt.MaxPixels {
		return fmt.Errorf("jpeg: image is %dx%d = %d pixels, more than the limit of %d", d.width, d.height, px, d.opt.MaxPixels)
	}
	return nil
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

var errTruncatedHeader = fmt.Errorf("jpeg: truncated in headers")
