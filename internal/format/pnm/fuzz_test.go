package pnm

import (
	"bytes"
	"image"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
)

// FuzzDecode checks that no input makes the reader panic, return an image
// other than its header says, fail with an error of more than one line or
// allocate much beyond the input and the image it returns.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		"P5\n3 1\n255\n\x00\x80\xff",
		"P6 1 1 255 \x01\x02\x03",
		"P5 2 1 1000\n\x01\xf4\x03\xe8",
		"P6 1 1 65535\n\x12\x34\x80\x00\xff\xff",
		"P5\n# more\r2 #x\n1 2#five\r55 \x00\xff",
		"P5 +1 0_1 2_5_5 \x05",
		"P6 4000 4000 65535 \x00\x00",
	} {
		f.Add([]byte(s))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		f.Add(randomPNM(rng))
	}
	const maxPixels = 1 << 16
	f.Fuzz(func(t *testing.T, data []byte) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		m, err := DecodeWith(bytes.NewReader(data), Options{MaxPixels: maxPixels})
		runtime.ReadMemStats(&after)
		// Samples as read (growing with the input), then at most 8 bytes
		// per pixel of the image returned.
		if got := after.TotalAlloc - before.TotalAlloc; got > uint64(4*len(data)+8*maxPixels+64<<10) {
			t.Fatalf("allocated %d bytes for a %d-byte input", got, len(data))
		}
		if err != nil {
			if m != nil {
				t.Fatal("image returned with an error")
			}
			if msg := err.Error(); !strings.HasPrefix(msg, "pnm: ") || strings.Contains(msg, "\n") {
				t.Fatalf("error %q is not one line starting with \"pnm: \"", msg)
			}
			return
		}
		c, err := DecodeConfig(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("Decode succeeded, DecodeConfig failed: %v", err)
		}
		if b := m.Bounds(); b != image.Rect(0, 0, c.Width, c.Height) || c.Pixels() > maxPixels {
			t.Fatalf("image %v, header %dx%d", b, c.Width, c.Height)
		}
		switch m.(type) {
		case *image.Gray, *image.Gray16:
			if c.Channels != 1 {
				t.Fatalf("%T for %d channels", m, c.Channels)
			}
		case *image.RGBA:
			if c.Channels != 3 {
				t.Fatalf("%T for %d channels", m, c.Channels)
			}
		default:
			t.Fatalf("unexpected %T", m)
		}
	})
}
