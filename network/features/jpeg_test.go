package features

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/genlens/genlens/fault"
)

// repeatFirstScan returns the progressive JPEG jpg with its first scan
// (its SOS segment and entropy-coded data, the DC scan of every
// component) repeated extra more times right after itself: a file whose
// decoding cost grows with extra in the decoders that read it (Go's
// image/jpeg; libjpeg-turbo, with a warning). genlens's decoder would
// refuse it at the second scan, an impossible progression; the scan
// count refuses it before decoding starts.
func repeatFirstScan(t testing.TB, jpg []byte, extra int) []byte {
	t.Helper()
	sos := bytes.Index(jpg, []byte{0xff, 0xda})
	if sos < 0 || sos+4 > len(jpg) {
		t.Fatal("no scan")
	}
	end := sos + 2 + (int(jpg[sos+2])<<8 | int(jpg[sos+3]))
	for end+1 < len(jpg) && (jpg[end] != 0xff || jpg[end+1] == 0 || jpg[end+1] >= 0xd0 && jpg[end+1] <= 0xd7) {
		end++
	}
	scan := jpg[sos:end]
	out := append([]byte(nil), jpg[:end]...)
	for range extra {
		out = append(out, scan...)
	}
	return append(out, jpg[end:]...)
}

// A progressive JPEG of 10 scans (cjpeg -progressive, libjpeg-turbo
// 2.1.5) decodes, and so does a valid one of 500 scans, the limit for its
// size (testdata/scans500.jpg, written by pil_images.py scans500); the
// first with a scan repeated 20,000 times is refused before decoding, at
// once, and so is the second with one scan more than the limit.
func TestJPEGScanLimit(t *testing.T) {
	jpg, err := os.ReadFile("testdata/progressive.jpg")
	if err != nil {
		t.Fatal(err)
	}
	if n, err := jpegScans(jpg, MaxJPEGScans); n != 10 || err != nil {
		t.Fatalf("jpegScans = %d, %v; want the 10 scans of libjpeg's progression", n, err)
	}
	limit, err := os.ReadFile("testdata/scans500.jpg")
	if err != nil {
		t.Fatal(err)
	}
	if n, err := jpegScans(limit, MaxJPEGScans); n != MaxJPEGScans || err != nil {
		t.Fatalf("jpegScans(scans500.jpg) = %d, %v", n, err)
	}
	fsys := fstest.MapFS{
		"real.jpg":    {Data: jpg},
		"limit.jpg":   {Data: limit},
		"over.jpg":    {Data: repeatFirstScan(t, limit, 1)},
		"hostile.jpg": {Data: repeatFirstScan(t, jpg, 20000)},
	}
	for _, name := range []string{"real.jpg", "limit.jpg"} {
		img, err := DecodeImage(fsys, name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if b := img.Bounds(); b.Dx() != 48 || b.Dy() != 32 {
			t.Errorf("%s: %v, want 48x32", name, b)
		}
	}
	if m, _ := Decode(fsys, "limit.jpg"); m != nil && !bytes.Equal(m.Pix, bytes.Repeat([]byte{128}, len(m.Pix))) {
		t.Error("limit.jpg: not flat grey 128, PIL's pixels")
	}
	var ie *fault.InputError
	if _, err := DecodeImage(fsys, "over.jpg"); !errors.As(err, &ie) || !strings.Contains(err.Error(), "more than 500 scans for its size") {
		t.Errorf("over.jpg: %v, want an input error over the scan limit", err)
	}
	start := time.Now()
	_, err = DecodeImage(fsys, "hostile.jpg")
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "more than 500 scans for its size") {
		t.Fatalf("err = %v, want an input error over the scan limit", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("refusing took %v", d)
	}
	t.Log(err)
}

func TestJPEGScanLimitBySize(t *testing.T) {
	for _, c := range []struct {
		pixels int64
		want   int
	}{{48 * 32, MaxJPEGScans}, {1024 * 1024, 500}, {2048 * 2048, 256}, {4096 * 4096, 64}, {1 << 30, 64}} {
		if got := jpegScanLimit(c.pixels); got != c.want {
			t.Errorf("jpegScanLimit(%d) = %d, want %d", c.pixels, got, c.want)
		}
	}
}

// jpegScans finds markers through stuffed bytes, restart markers and fill
// bytes, and stops at EOI.
func TestJPEGScansMarkers(t *testing.T) {
	for _, c := range []struct {
		name string
		b    []byte
		want int
	}{
		{"not a JPEG", []byte("GIF89a"), 0},
		{"no scans", []byte{0xff, 0xd8, 0xff, 0xd9}, 0},
		{"two scans, stuffing, restarts, fill", []byte{0xff, 0xd8,
			0xff, 0xda, 0, 3, 1, 0xff, 0, 2, 0xff, 0xd3, 4, // scan 1: header of 1 byte, data with FF00 and RST3
			0xff, 0xff, 0xc4, 0, 2, // fill bytes, then an empty DHT
			0xff, 0xda, 0, 2, 9, 9, // scan 2
			0xff, 0xd9, 0xff, 0xda, 0, 2}, 2}, // nothing counts after EOI
		{"truncated scan", []byte{0xff, 0xd8, 0xff, 0xda, 0, 2, 1, 2}, 1},
		{"truncated length", []byte{0xff, 0xd8, 0xff, 0xc4, 0}, 0},
	} {
		if got, err := jpegScans(c.b, MaxJPEGScans); got != c.want || err != nil {
			t.Errorf("%s: %d, %v; want %d", c.name, got, err, c.want)
		}
	}
}

// BenchmarkDecodeRepeatedScans measures what the limit saves: decoding
// the small progressive JPEG with its first scan repeated 2,000 times.
func BenchmarkDecodeRepeatedScans(b *testing.B) {
	jpg, err := os.ReadFile("testdata/progressive.jpg")
	if err != nil {
		b.Fatal(err)
	}
	h := repeatFirstScan(b, jpg, 2000)
	fsys := fstest.MapFS{"h.jpg": {Data: h}}
	for b.Loop() {
		if _, err := DecodeImage(fsys, "h.jpg"); err == nil {
			b.Fatal("decoded")
		}
	}
}
