package webp

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"image"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// riff wraps chunks in a RIFF WEBP container.
func riff(chunks ...[]byte) []byte {
	body := []byte("WEBP")
	for _, c := range chunks {
		body = append(body, c...)
	}
	out := append([]byte("RIFF"), binary.LittleEndian.AppendUint32(nil, uint32(len(body)))...)
	return append(out, body...)
}

func chunk(id string, data []byte) []byte {
	out := append([]byte(id), binary.LittleEndian.AppendUint32(nil, uint32(len(data)))...)
	out = append(out, data...)
	if len(data)%2 == 1 {
		out = append(out, 0)
	}
	return out
}

func vp8x(flags byte, w, h int) []byte {
	d := []byte{flags, 0, 0, 0, byte(w - 1), byte((w - 1) >> 8), byte((w - 1) >> 16), byte(h - 1), byte((h - 1) >> 8), byte((h - 1) >> 16)}
	return chunk("VP8X", d)
}

// vp8Header is the start of a key frame of w x h.
func vp8Header(w, h int) []byte {
	return chunk("VP8 ", []byte{0x10, 0x02, 0x00, 0x9d, 0x01, 0x2a, byte(w), byte(w >> 8), byte(h), byte(h >> 8), 0, 0})
}

func vp8lHeader(w, h int, alpha bool) []byte {
	bits := uint32(w-1) | uint32(h-1)<<14
	if alpha {
		bits |= 1 << 28
	}
	return chunk("VP8L", append([]byte{0x2f}, binary.LittleEndian.AppendUint32(nil, bits)...))
}

func TestDecodeConfig(t *testing.T) {
	for _, c := range []struct {
		name string
		in   []byte
		want Config
		err  string
	}{
		{"lossy", riff(vp8Header(300, 200)), Config{Width: 300, Height: 200}, ""},
		{"lossless", riff(vp8lHeader(16383, 5, true)), Config{Width: 16383, Height: 5, Lossless: true, Alpha: true}, ""},
		{"extended, metadata skipped", riff(vp8x(0x10|0x20, 7, 9), chunk("ICCP", []byte("abc")), chunk("ALPH", []byte{0}), vp8Header(7, 9)), Config{Width: 7, Height: 9, Alpha: true}, ""},
		{"canvas differs", riff(vp8x(0, 7, 9), vp8Header(16383, 16383)), Config{}, "bitstream is 16383x16383 but the canvas 7x9"},
		{"animated", riff(vp8x(0x02, 7, 9), chunk("ANIM", make([]byte, 6))), Config{}, "animated"},
		{"animation chunk", riff(chunk("ANMF", make([]byte, 16))), Config{}, "animated"},
		{"empty", riff(vp8Header(0, 5)), Config{}, "empty 0x5"},
		{"not a key frame", riff(chunk("VP8 ", []byte{0x11, 0, 0, 0x9d, 0x01, 0x2a, 1, 0, 1, 0})), Config{}, "key frame"},
		{"no bitstream", riff(chunk("EXIF", []byte("xx"))), Config{}, "no VP8 or VP8L chunk"},
		{"not riff", []byte("RIFX0000WEBP"), Config{}, "not a WebP file"},
		{"short", []byte("RIFF"), Config{}, "not a WebP file"},
		{"bad vp8l", riff(chunk("VP8L", []byte{0x2e, 0, 0, 0, 0})), Config{}, "VP8L signature"},
	} {
		got, err := DecodeConfig(bytes.NewReader(c.in))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || !strings.HasPrefix(err.Error(), "webp: ") {
				t.Errorf("%s: %+v, %v; want an error with %q", c.name, got, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s: %+v, %v; want %+v", c.name, got, err, c.want)
		}
	}
}

// near and fancy are libwebp's: a worked 2x2 block and the edges.
func TestFancy(t *testing.T) {
	// Samples a b / c d: the output nearest a is (9a+3b+3c+d+8)/16 in two
	// rounded steps.
	if got := fancy(100, 0, 0, 0); got != (100+(100+8)>>3)>>1 {
		t.Errorf("fancy(100,0,0,0) = %d", got)
	}
	if got := fancy(7, 7, 7, 7); got != 7 {
		t.Errorf("flat: %d", got)
	}
	for _, c := range []struct{ i, n, near, far int }{
		{0, 3, 0, 0}, {1, 3, 0, 1}, {2, 3, 1, 0}, {3, 3, 1, 2}, {4, 3, 2, 1}, {5, 3, 2, 2}, {0, 1, 0, 0}, {1, 1, 0, 0},
	} {
		if a, b := near(c.i, c.n); a != c.near || b != c.far {
			t.Errorf("near(%d, %d) = %d, %d; want %d, %d", c.i, c.n, a, b, c.near, c.far)
		}
	}
	// BT.601 studio range: 16 is black, 235 white.
	for _, c := range []struct {
		y, u, v int32
		rgb     [3]uint8
	}{{16, 128, 128, [3]uint8{0, 0, 0}}, {235, 128, 128, [3]uint8{255, 255, 255}}} {
		m := image.NewYCbCr(image.Rect(0, 0, 1, 1), image.YCbCrSubsampleRatio420)
		m.Y[0], m.Cb[0], m.Cr[0] = uint8(c.y), uint8(c.u), uint8(c.v)
		out, err := fancyRGBA(m, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := [3]uint8(out.Pix[:3]); got != c.rgb || out.Pix[3] != 0xff {
			t.Errorf("YUV %d,%d,%d: %v, want %v", c.y, c.u, c.v, out.Pix, c.rgb)
		}
	}
}

// TestPillow encodes random images with Pillow and cwebp (lossless and
// lossy, with and without alpha, every loop filter; odd and tiny sizes)
// and compares Decode with Pillow's decoding, colour and alpha.
func TestPillow(t *testing.T) {
	const python = "/usr/bin/python3"
	if err := exec.Command(python, "-c", "import PIL, numpy").Run(); err != nil {
		t.Skipf("skipping: %s cannot import PIL and numpy (%v)", python, err)
	}
	if _, err := exec.LookPath("cwebp"); err != nil {
		t.Skip("skipping: cwebp not installed")
	}
	dir := t.TempDir()
	script := `
import os, subprocess, sys, numpy as np
from PIL import Image
d, n = sys.argv[1], int(sys.argv[2])
rng = np.random.default_rng(7)
for i in range(n):
    w, h = (int(rng.integers(1, 5)), int(rng.integers(1, 5))) if i % 5 == 0 else (int(rng.integers(1, 130)), int(rng.integers(1, 130)))
    g = rng.integers(0, 256, (h // 6 + 2, w // 6 + 2, 4)).astype(np.uint8)
    a = np.asarray(Image.fromarray(g).resize((w, h), Image.BILINEAR)).astype(int)
    a = np.clip(a + rng.integers(-20, 21, a.shape), 0, 255).astype(np.uint8)
    a[..., 3][rng.random((h, w)) < 0.3] = 0
    im = Image.fromarray(a, "RGBA")
    if i % 2 == 0:
        im = im.convert("RGB")
    p = os.path.join(d, "%03d.webp" % i)
    kind = i % 4
    if kind == 0:
        im.save(p, lossless=True, exact=True)
    elif kind == 1:
        im.save(p, quality=int(rng.integers(0, 101)))
    else:
        src = p + ".png"
        im.save(src)
        args = ["-q", str(int(rng.integers(0, 101))), "-segments", str(int(rng.integers(1, 5))), "-sharpness", str(int(rng.integers(0, 8)))]
        args += [["-nostrong"], ["-strong"], ["-f", "0"], ["-alpha_filter", "best", "-alpha_q", "50"]][int(rng.integers(0, 4))]
        subprocess.run(["cwebp", "-quiet"] + args + [src, "-o", p], check=True)
        os.remove(src)
    with Image.open(p) as d2:
        out = np.asarray(d2.convert("RGBA"))
    open(p + ".rgba", "wb").write(b"%d %d\n" % (w, h) + out.tobytes())
`
	const n = 120
	if out, err := exec.Command(python, "-c", script, dir, fmt.Sprint(n)).CombinedOutput(); err != nil {
		t.Fatalf("python: %v\n%s", err, out)
	}
	lossy := 0
	for i := range n {
		p := filepath.Join(dir, fmt.Sprintf("%03d.webp", i))
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(p + ".rgba")
		if err != nil {
			t.Fatal(err)
		}
		nl := bytes.IndexByte(want, '\n')
		var w, h int
		fmt.Sscanf(string(want[:nl]), "%d %d", &w, &h)
		want = want[nl+1:]
		c, err := DecodeConfig(bytes.NewReader(data))
		if err != nil || c.Width != w || c.Height != h {
			t.Errorf("%d: DecodeConfig %+v, %v; want %dx%d", i, c, err, w, h)
			continue
		}
		if !c.Lossless {
			lossy++
		}
		m, err := Decode(bytes.NewReader(data))
		if err != nil {
			t.Errorf("%d: %v", i, err)
			continue
		}
		if m.Rect != image.Rect(0, 0, w, h) || !bytes.Equal(m.Pix, want) {
			diff := 0
			for k := range min(len(m.Pix), len(want)) {
				if m.Pix[k] != want[k] {
					diff++
				}
			}
			t.Errorf("%d (%dx%d, lossless %v): %d of %d values differ from Pillow's", i, w, h, c.Lossless, diff, len(want))
		}
	}
	t.Logf("%d files (%d lossy) decode to Pillow's RGBA", n, lossy)
}
