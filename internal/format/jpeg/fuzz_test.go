package jpeg

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// FuzzDecode checks that no input makes the decoder panic, return a
// malformed image or allocate beyond what its limits allow.
func FuzzDecode(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.jpg"))
	if err != nil {
		f.Fatal(err)
	}
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		// Keep the seeds small so mutations explore the coding, not size.
		if len(data) < 64<<10 {
			f.Add(data)
		}
	}
	const maxPixels = 1 << 20
	opt := Options{MaxPixels: maxPixels, MaxScans: 64}
	// Output, sample planes and coefficients for the largest image allowed:
	// 3 bytes of RGB per pixel plus, per component, at most 16 samples per
	// pixel (sampling padding) and two bytes per coefficient.
	const allocBound = 3*maxPixels + 4*(16+32)*maxPixels + 1<<20
	f.Fuzz(func(t *testing.T, data []byte) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		img, err := DecodeWith(bytes.NewReader(data), opt)
		runtime.ReadMemStats(&after)
		if got := after.TotalAlloc - before.TotalAlloc; got > uint64(allocBound+4*len(data)) {
			t.Fatalf("allocated %d bytes for a %d-byte input", got, len(data))
		}
		if err != nil {
			if img != nil {
				t.Fatal("image returned with an error")
			}
			if msg := err.Error(); !strings.HasPrefix(msg, "jpeg: ") || strings.Contains(msg, "\n") {
				t.Fatalf("error %q is not one line starting with \"jpeg: \"", msg)
			}
			return
		}
		if img.Width <= 0 || img.Height <= 0 || len(img.Pix) != 3*img.Width*img.Height {
			t.Fatalf("bad image %dx%d with %d bytes", img.Width, img.Height, len(img.Pix))
		}
		c, err := DecodeConfig(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("Decode succeeded but DecodeConfig failed: %v", err)
		}
		if c.Width != img.Width || c.Height != img.Height {
			t.Fatalf("DecodeConfig says %dx%d, Decode gave %dx%d", c.Width, c.Height, img.Width, img.Height)
		}
	})
}
