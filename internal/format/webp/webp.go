// Package webp decodes still WebP files to the pixels Pillow 9.4 returns
// for Image.open(f).convert("RGB"), which libwebp 1.2 decodes.
//
// The bitstreams are decoded by golang.org/x/image/webp (VP8 for lossy
// files, VP8L for lossless ones, ALPH for the alpha of lossy ones).
// Lossless pixels need nothing more. A lossy file decodes to Y'CbCr with
// chroma at half resolution in both directions, and libwebp turns that
// into RGB its own way, which x/image/webp leaves to the caller: Decode
// upsamples the chroma with libwebp's "fancy" filter (each output sample
// is (9·a + 3·b + 3·c + d + 8)/16 of its four nearest chroma samples,
// computed in two rounded steps, edges replicated) and converts with
// libwebp's 14-bit fixed-point BT.601 formulas (yuv.h), which its SSE2
// and C paths compute alike.
//
// Alpha is kept beside the colour, not premultiplied into it: Pillow asks
// libwebp for non-premultiplied RGBA, so the colour under a transparent
// pixel is what the file codes.
//
// Animated files are refused (Pillow would give the first frame; genlens
// reads still images only), as are files whose bitstream size differs
// from the canvas of their VP8X header, which libwebp refuses too.
// DecodeConfig reads the size from the bitstream header itself, so a
// caller can bound the memory before Decode allocates it.
package webp

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"io"

	xwebp "golang.org/x/image/webp"
)

// Config is what the headers of a WebP file say.
type Config struct {
	Width, Height int
	Lossless      bool // VP8L rather than VP8
	Alpha         bool // the image has an alpha channel
}

// Pixels returns Width·Height.
func (c Config) Pixels() int64 { return int64(c.Width) * int64(c.Height) }

// DecodeConfig reads the RIFF chunks of a WebP file up to the header of
// its bitstream and returns the size that bitstream declares.
func DecodeConfig(r io.Reader) (Config, error) {
	br, ok := r.(interface {
		io.Reader
		io.ByteReader
	})
	if !ok {
		br = bufio.NewReaderSize(r, 512)
	}
	var hdr [12]byte
	if _, err := io.ReadFull(br, hdr[:]); err != nil {
		return Config{}, errors.New("webp: not a WebP file (too short)")
	}
	if string(hdr[0:4]) != "RIFF" || string(hdr[8:12]) != "WEBP" {
		return Config{}, errors.New("webp: not a WebP file (no RIFF WEBP header)")
	}
	var (
		canvasW, canvasH int
		vp8x, alpha      bool
	)
	for {
		var ch [8]byte
		if _, err := io.ReadFull(br, ch[:]); err != nil {
			return Config{}, errors.New("webp: no VP8 or VP8L chunk before the end of the file")
		}
		id, n := string(ch[0:4]), binary.LittleEndian.Uint32(ch[4:8])
		switch id {
		case "VP8X":
			if vp8x || n != 10 {
				return Config{}, errors.New("webp: invalid VP8X chunk")
			}
			var b [10]byte
			if _, err := io.ReadFull(br, b[:]); err != nil {
				return Config{}, errors.New("webp: truncated VP8X chunk")
			}
			vp8x = true
			if b[0]&0x02 != 0 {
				return Config{}, errors.New("webp: animated WebP files are not read (save the frame as a still image)")
			}
			alpha = b[0]&0x10 != 0
			canvasW = 1 + int(b[4]) | int(b[5])<<8 | int(b[6])<<16
			canvasH = 1 + int(b[7]) | int(b[8])<<8 | int(b[9])<<16
			continue
		case "ANIM", "ANMF":
			return Config{}, errors.New("webp: animated WebP files are not read (save the frame as a still image)")
		case "VP8 ":
			var b [10]byte
			if n < 10 {
				return Config{}, errors.New("webp: VP8 chunk too short")
			}
			if _, err := io.ReadFull(br, b[:]); err != nil {
				return Config{}, errors.New("webp: truncated VP8 chunk")
			}
			if b[0]&1 != 0 || b[3] != 0x9d || b[4] != 0x01 || b[5] != 0x2a {
				return Config{}, errors.New("webp: VP8 bitstream is not a key frame")
			}
			c := Config{
				Width:  int(binary.LittleEndian.Uint16(b[6:8]) & 0x3fff),
				Height: int(binary.LittleEndian.Uint16(b[8:10]) & 0x3fff),
				Alpha:  alpha,
			}
			return c, checkCanvas(c, vp8x, canvasW, canvasH)
		case "VP8L":
			var b [5]byte
			if n < 5 {
				return Config{}, errors.New("webp: VP8L chunk too short")
			}
			if _, err := io.ReadFull(br, b[:]); err != nil {
				return Config{}, errors.New("webp: truncated VP8L chunk")
			}
			if b[0] != 0x2f {
				return Config{}, errors.New("webp: invalid VP8L signature")
			}
			bits := binary.LittleEndian.Uint32(b[1:5])
			c := Config{
				Width:    1 + int(bits&0x3fff),
				Height:   1 + int(bits>>14&0x3fff),
				Lossless: true,
				Alpha:    bits>>28&1 != 0 || alpha,
			}
			return c, checkCanvas(c, vp8x, canvasW, canvasH)
		}
		// Any other chunk (ICCP, EXIF, XMP, ALPH, unknown): skip it,
		// with its padding to an even length.
		skip := int64(n) + int64(n&1)
		if _, err := io.CopyN(io.Discard, br, skip); err != nil {
			return Config{}, fmt.Errorf("webp: truncated %q chunk", id)
		}
	}
}

func checkCanvas(c Config, vp8x bool, w, h int) error {
	if c.Width < 1 || c.Height < 1 {
		return fmt.Errorf("webp: bitstream declares an empty %dx%d image", c.Width, c.Height)
	}
	if vp8x && (c.Width != w || c.Height != h) {
		return fmt.Errorf("webp: bitstream is %dx%d but the canvas %dx%d", c.Width, c.Height, w, h)
	}
	return nil
}

// Decode reads a still WebP image from r and returns it as libwebp gives
// it to Pillow: an *image.NRGBA, non-premultiplied, alpha 255 where the
// file has none. The caller should check DecodeConfig's size first.
func Decode(r io.Reader) (*image.NRGBA, error) {
	m, err := xwebp.Decode(r)
	if err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return nil, errors.New("webp: truncated file")
		}
		msg := err.Error()
		if len(msg) < 5 || msg[:5] != "webp:" {
			msg = "webp: " + msg
		}
		return nil, errors.New(msg)
	}
	switch m := m.(type) {
	case *image.NRGBA:
		return m, nil
	case *image.YCbCr:
		return fancyRGBA(m, nil, 0)
	case *image.NYCbCrA:
		return fancyRGBA(&m.YCbCr, m.A, m.AStride)
	}
	return nil, fmt.Errorf("webp: unexpected %T from the decoder", m)
}

// fancyRGBA converts a 4:2:0 frame to RGBA as libwebp's fancy upsampler
// and YUV converter do; alpha, when not nil, is copied beside.
func fancyRGBA(m *image.YCbCr, alpha []byte, astride int) (*image.NRGBA, error) {
	b := m.Rect
	w, h := b.Dx(), b.Dy()
	if m.SubsampleRatio != image.YCbCrSubsampleRatio420 {
		return nil, fmt.Errorf("webp: unexpected chroma subsampling %v", m.SubsampleRatio)
	}
	if w < 1 || h < 1 || alpha != nil && (astride < w || len(alpha) < (h-1)*astride+w) {
		return nil, errors.New("webp: alpha plane does not cover the image")
	}
	if b.Min != (image.Point{}) {
		return nil, errors.New("webp: frame does not start at the origin")
	}
	out := image.NewNRGBA(image.Rect(0, 0, w, h))
	cw, ch := (w+1)/2, (h+1)/2
	// libwebp rounds the two-dimensional sum, so the filter is not applied
	// as two one-dimensional passes: each chroma sample comes from its
	// four neighbours at once.
	for y := 0; y < h; y++ {
		ny, fy := near(y, ch)
		yrow := m.Y[y*m.YStride:][:w]
		cb0 := m.Cb[ny*m.CStride:][:cw]
		cb1 := m.Cb[fy*m.CStride:][:cw]
		cr0 := m.Cr[ny*m.CStride:][:cw]
		cr1 := m.Cr[fy*m.CStride:][:cw]
		o := out.Pix[y*out.Stride:][:4*w]
		for x := 0; x < w; x++ {
			nx, fx := near(x, cw)
			u := fancy(cb0[nx], cb0[fx], cb1[nx], cb1[fx])
			v := fancy(cr0[nx], cr0[fx], cr1[nx], cr1[fx])
			yy := int32(yrow[x])
			p := o[4*x : 4*x+4]
			p[0] = clipYUV(mulHi(yy, 19077) + mulHi(v, 26149) - 14234)
			p[1] = clipYUV(mulHi(yy, 19077) - mulHi(u, 6419) - mulHi(v, 13320) + 8708)
			p[2] = clipYUV(mulHi(yy, 19077) + mulHi(u, 33050) - 17685)
			p[3] = 0xff
		}
		if alpha != nil {
			a := alpha[y*astride:][:w]
			for x, v := range a {
				o[4*x+3] = v
			}
		}
	}
	return out, nil
}

// near returns the chroma sample nearest to full-resolution position i
// and the next nearest, of n samples: i = 2k+1 lies between k and k+1,
// i = 2k between k-1 and k; past the edges the sample repeats.
func near(i, n int) (int, int) {
	k := i >> 1
	if i&1 == 1 {
		return k, min(k+1, n-1)
	}
	return k, max(k-1, 0)
}

// fancy is libwebp's upsampled chroma sample from the nearest sample a,
// its horizontal and vertical neighbours b and c and the diagonal one d:
// (a + (a + 3b + 3c + d + 8)/8) / 2, floors throughout.
func fancy(a, b, c, d uint8) int32 {
	a32 := int32(a)
	return (a32 + (a32+3*int32(b)+3*int32(c)+int32(d)+8)>>3) >> 1
}

// mulHi is libwebp's emulation of _mm_mulhi_epu16 on a sample shifted
// left by 8: (v·coeff) >> 8.
func mulHi(v, coeff int32) int32 { return (v * coeff) >> 8 }

// clipYUV descales a 6-bit fixed-point value to a byte, saturating.
func clipYUV(v int32) uint8 {
	if v&^(256<<6-1) == 0 {
		return uint8(v >> 6)
	}
	if v < 0 {
		return 0
	}
	return 255
}
