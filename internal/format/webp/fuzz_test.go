package webp

import (
	"bytes"
	"image"
	"strings"
	"testing"
)

// FuzzDecode checks that DecodeConfig never panics, that an image Decode
// returns has the size DecodeConfig read from the bitstream (the size a
// caller bounds), and that errors are one line.
func FuzzDecode(f *testing.F) {
	f.Add(riff(vp8Header(3, 2)))
	f.Add(riff(vp8lHeader(3, 2, true)))
	f.Add(riff(vp8x(0x10, 7, 9), chunk("ALPH", []byte{0}), vp8Header(7, 9)))
	// A 1x1 lossless image and a 2x2 lossy one, as cwebp writes them.
	f.Add([]byte("RIFF\x1a\x00\x00\x00WEBPVP8L\x0d\x00\x00\x00\x2f\x00\x00\x00\x10\x07\x10\x11\x11\x88\x88\xfe\x07\x00"))
	f.Add([]byte("RIFF\x30\x00\x00\x00WEBPVP8 \x24\x00\x00\x00\xd0\x01\x00\x9d\x01\x2a\x02\x00\x02\x00\x02\x00\x34\x25\xa4\x00\x03\x70\x00\xfe\xfb\x94\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, cerr := DecodeConfig(bytes.NewReader(data))
		if cerr != nil {
			if msg := cerr.Error(); !strings.HasPrefix(msg, "webp: ") || strings.Contains(msg, "\n") {
				t.Fatalf("error %q is not one line starting with \"webp: \"", msg)
			}
			return
		}
		if c.Pixels() > 1<<20 {
			return // a caller refuses it before Decode
		}
		m, err := Decode(bytes.NewReader(data))
		if err != nil {
			if msg := err.Error(); strings.Contains(msg, "\n") {
				t.Fatalf("error %q is not one line", msg)
			}
			return
		}
		if m.Rect != image.Rect(0, 0, c.Width, c.Height) {
			t.Fatalf("decoded %v, DecodeConfig said %dx%d", m.Rect, c.Width, c.Height)
		}
	})
}
