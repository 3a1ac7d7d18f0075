package pnm

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"
)

// samples returns the values of a decoded image in PIL's layout: bytes
// for "L" and "RGB", big-endian 16-bit values for "I".
func samples(m image.Image) (mode string, out []byte) {
	switch m := m.(type) {
	case *image.Gray:
		return "L", m.Pix
	case *image.Gray16:
		return "I", m.Pix
	case *image.RGBA:
		out := make([]byte, 0, len(m.Pix)/4*3)
		for i := 0; i < len(m.Pix); i += 4 {
			if m.Pix[i+3] != 0xff {
				panic("not opaque")
			}
			out = append(out, m.Pix[i:i+3]...)
		}
		return "RGB", out
	}
	panic(fmt.Sprintf("%T", m))
}

func TestDecode(t *testing.T) {
	for _, c := range []struct {
		name, in string
		mode     string
		w, h     int
		want     []byte // samples; nil with err
		err      string
	}{
		{"P5 255", "P5\n3 1\n255\n\x00\x80\xff", "L", 3, 1, []byte{0, 128, 255}, ""},
		{"P6 255", "P6 1 1 255 \x01\x02\x03", "RGB", 1, 1, []byte{1, 2, 3}, ""},
		// maxval 1: 0 and 1 scale to 0 and 255, 2 exceeds and caps.
		{"P5 maxval 1", "P5 3 1 1\n\x00\x01\x02", "L", 3, 1, []byte{0, 255, 255}, ""},
		// 1/2*255 = 127.5 rounds to even (128); 1/3*255 = 85.
		{"P5 maxval 2, 3", "P5 2 1 2\n\x01\x02", "L", 2, 1, []byte{128, 255}, ""},
		{"P5 maxval 3", "P5 1 1 3\n\x01", "L", 1, 1, []byte{85}, ""},
		// 16-bit PGM is PIL's mode "I": values rescaled to 65535.
		{"P5 65535", "P5 2 1 65535\n\x01\x02\xff\xff", "I", 2, 1, []byte{1, 2, 0xff, 0xff}, ""},
		{"P5 maxval 1000", "P5 2 1 1000\n\x01\xf4\x03\xe8", "I", 2, 1, be16(scale(500, 1000, 65535), 65535), ""},
		{"P6 16-bit", "P6 1 1 65535\n\x12\x34\x80\x00\xff\xff", "RGB", 1, 1, []byte{byte(scale(0x1234, 65535, 255)), 128, 255}, ""},
		// Comments: to CR or LF, anywhere, even inside a token.
		{"comments", "P5\n# more\r2 #x\n1 2#five\r55 \x00\xff", "L", 2, 1, []byte{0, 255}, ""},
		{"comment after magic", "P5#c\n1 1 255 \x00", "", 0, 0, nil, "not a binary PGM"},
		{"comment joins a token", "P5 1#c\n2 1 255 " + strings.Repeat("\x07", 12), "L", 12, 1, bytes.Repeat([]byte{7}, 12), ""},
		{"whitespace", "P5\t\v\f\r 1\r\n1\t255\r\x09", "L", 1, 1, []byte{9}, ""},
		{"python int", "P5 +1 0_1 2_5_5 \x05", "L", 1, 1, []byte{5}, ""},
		{"leading zeros", "P5 001 1 0255 \x05", "L", 1, 1, []byte{5}, ""},
		{"trailing data ignored", "P5 1 1 255 \x05\x06\x07", "L", 1, 1, []byte{5}, ""},
		{"truncated", "P5 2 2 255 \x00\x00\x00", "", 0, 0, nil, "truncated"},
		{"truncated 16-bit", "P6 1 1 256 \x00\x00\x00\x00\x00", "", 0, 0, nil, "truncated"},
		{"no data", "P5 1 1 255", "", 0, 0, nil, "truncated"},
		{"maxval 0", "P5 1 1 0 \x00", "", 0, 0, nil, "maxval 0"},
		{"maxval 65536", "P5 1 1 65536 \x00\x00", "", 0, 0, nil, "maxval 65536"},
		{"empty", "P5 0 1 255 ", "", 0, 0, nil, "empty"},
		{"negative", "P5 -1 1 255 ", "", 0, 0, nil, "empty"},
		{"token too long", "P5 00000000001 1 255 \x00", "", 0, 0, nil, "too long"},
		{"double underscore", "P5 1__0 1 255 \x00", "", 0, 0, nil, "not a number"},
		{"header ends", "P6 1 1", "", 0, 0, nil, "header ends early"},
		{"plain", "P2 1 1 255 0", "", 0, 0, nil, "P2 files"},
		{"bitmap", "P4 1 1 \x00", "", 0, 0, nil, "P4 files"},
		{"magic not ended", "P51 1 255 ", "", 0, 0, nil, "not a binary PGM"},
		{"not pnm", "GIF89a", "", 0, 0, nil, "not a binary PGM"},
	} {
		m, err := Decode(strings.NewReader(c.in))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || !strings.HasPrefix(err.Error(), "pnm: ") {
				t.Errorf("%s: %v, want an error with %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		mode, got := samples(m)
		if b := m.Bounds(); mode != c.mode || b.Dx() != c.w || b.Dy() != c.h || !bytes.Equal(got, c.want) {
			t.Errorf("%s: %s %v %v, want %s %dx%d %v", c.name, mode, b, got, c.mode, c.w, c.h, c.want)
		}
		cfg, err := DecodeConfig(strings.NewReader(c.in))
		if err != nil || cfg.Width != c.w || cfg.Height != c.h {
			t.Errorf("%s: DecodeConfig %+v, %v", c.name, cfg, err)
		}
	}
}

func be16(vs ...int) []byte {
	var b []byte
	for _, v := range vs {
		b = append(b, byte(v>>8), byte(v))
	}
	return b
}

// Python's round(v / maxval * out) for every maxval and sample, spot
// checked: float64 arithmetic, ties to even.
func TestScale(t *testing.T) {
	for _, c := range []struct{ v, maxval, out, want int }{
		{1, 2, 255, 128}, // 127.5 -> 128
		{3, 2, 255, 255}, // capped
		{1, 6, 255, 42},  // 42.5 -> 42
		{5, 6, 255, 212}, // 212.5 -> 212
		{300, 600, 65535, 32768},
		{1, 2, 65535, 32768}, // 32767.5 -> 32768
		{65535, 65535, 255, 255},
		{0x8000, 65535, 255, 128},
	} {
		if got := scale(c.v, c.maxval, c.out); got != c.want {
			t.Errorf("scale(%d, %d, %d) = %d, want %d", c.v, c.maxval, c.out, got, c.want)
		}
	}
	if math.RoundToEven(0.5) != 0 {
		t.Fatal("RoundToEven")
	}
}

// Reading byte by byte, or from a reader that errs, changes nothing.
func TestReaders(t *testing.T) {
	in := "P6 2 1 255\n\x01\x02\x03\x04\x05\x06"
	m, err := Decode(iotest.OneByteReader(strings.NewReader(in)))
	if err != nil {
		t.Fatal(err)
	}
	if _, got := samples(m); !bytes.Equal(got, []byte{1, 2, 3, 4, 5, 6}) {
		t.Errorf("got %v", got)
	}
	boom := errors.New("boom")
	_, err = Decode(io.MultiReader(strings.NewReader("P5 9 9 255 \x00"), iotest.ErrReader(boom)))
	if !errors.Is(err, boom) {
		t.Errorf("err = %v, want the reader's", err)
	}
	if _, err := DecodeWith(strings.NewReader("P5 5000 5000 255 "), Options{MaxPixels: 1 << 20}); err == nil || !strings.Contains(err.Error(), "more than 1048576 pixels") {
		t.Errorf("over MaxPixels: %v", err)
	}
}

// A short file claiming a large image allocates for what it holds, not
// for what it claims.
func TestShortFileAllocation(t *testing.T) {
	in := "P6 4000 4000 65535 \x00\x00"
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if _, err := Decode(strings.NewReader(in)); err == nil {
		t.Fatal("decoded")
	}
	runtime.ReadMemStats(&after)
	if d := after.TotalAlloc - before.TotalAlloc; d > 1<<20 {
		t.Errorf("allocated %d bytes for a short file claiming 4000x4000", d)
	}
}

// TestPIL writes random PGM and PPM files, with every quirk of the
// header (comments inside tokens, every whitespace byte, signs and
// underscores, long tokens) and of the samples (maxval 1 to 65535, values
// past maxval, short and long data), and compares Decode with what
// Pillow's Image.open reads: its mode, size and values, or its refusal.
func TestPIL(t *testing.T) {
	const python = "/usr/bin/python3"
	if err := exec.Command(python, "-c", "import PIL, numpy").Run(); err != nil {
		t.Skipf("skipping: %s cannot import PIL and numpy (%v)", python, err)
	}
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(3, 5))
	const n = 600
	for i := range n {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%03d.pnm", i)), randomPNM(rng), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// PIL's values: mode, size and the samples as samples() lays them out.
	script := `
import os, sys, numpy as np
from PIL import Image
d = sys.argv[1]
for name in sorted(os.listdir(d)):
    p = os.path.join(d, name)
    try:
        with Image.open(p) as im:
            im.load()
            a = np.asarray(im)
            if im.mode == "I":
                assert a.min() >= 0 and a.max() <= 65535
                a = a.astype(">u2")
            open(p + ".out", "wb").write(b"%s %d %d\n" % (im.mode.encode(), im.size[0], im.size[1]) + a.tobytes())
    except Exception as e:
        open(p + ".err", "w").write(repr(e))
`
	if out, err := exec.Command(python, "-c", script, dir).CombinedOutput(); err != nil {
		t.Fatalf("python: %v\n%s", err, out)
	}
	decoded, refused := 0, 0
	for i := range n {
		p := filepath.Join(dir, fmt.Sprintf("%03d.pnm", i))
		in, _ := os.ReadFile(p)
		m, err := Decode(bytes.NewReader(in))
		want, rerr := os.ReadFile(p + ".out")
		if rerr != nil {
			perr, _ := os.ReadFile(p + ".err")
			if err == nil {
				t.Errorf("%q: decoded, PIL refuses: %s", head(in), perr)
			}
			refused++
			continue
		}
		if err != nil {
			t.Errorf("%q: %v; PIL reads %q", head(in), err, want[:bytes.IndexByte(want, '\n')])
			continue
		}
		mode, got := samples(m)
		b := m.Bounds()
		hdr := fmt.Sprintf("%s %d %d\n", mode, b.Dx(), b.Dy())
		if !bytes.HasPrefix(want, []byte(hdr)) || !bytes.Equal(got, want[len(hdr):]) {
			t.Errorf("%q: %s%v, PIL %q", head(in), hdr, got[:min(len(got), 12)], want[:min(len(want), 40)])
			continue
		}
		decoded++
	}
	t.Logf("%d files: %d decoded as PIL decodes them, %d refused as PIL refuses them", n, decoded, refused)
	if decoded < n/2 {
		t.Errorf("only %d of %d files decoded: the generator is too hostile", decoded, n)
	}
}

func head(b []byte) []byte { return b[:min(len(b), 30)] }

// randomPNM returns a PGM or PPM file with random header quirks.
func randomPNM(rng *rand.Rand) []byte {
	const spaces = " \t\n\v\f\r"
	var b bytes.Buffer
	if rng.IntN(2) == 0 {
		b.WriteString("P5")
	} else {
		b.WriteString("P6")
	}
	channels := 1
	if b.Bytes()[1] == '6' {
		channels = 3
	}
	w, h := 1+rng.IntN(9), 1+rng.IntN(9)
	var maxval int
	switch rng.IntN(5) {
	case 0:
		maxval = 255
	case 1:
		maxval = 65535
	case 2:
		maxval = 1 + rng.IntN(255)
	default:
		maxval = 1 + rng.IntN(65535)
	}
	for _, v := range []int{w, h, maxval} {
		for range 1 + rng.IntN(2) {
			b.WriteByte(spaces[rng.IntN(len(spaces))])
		}
		s := fmt.Sprint(v)
		switch rng.IntN(12) {
		case 0:
			s = "+" + s
		case 1:
			s = "0" + s
		case 2:
			if len(s) > 1 {
				s = s[:1] + "_" + s[1:]
			}
		case 3:
			// A comment inside the token, which PIL skips.
			k := rng.IntN(len(s) + 1)
			s = s[:k] + "#c" + []string{"\n", "\r"}[rng.IntN(2)] + s[k:]
		case 4:
			s = "#x\n" + s
		case 5:
			s = strings.Repeat("0", 10) + s // too long unless v < 10...
		}
		b.WriteString(s)
	}
	b.WriteByte(spaces[rng.IntN(len(spaces))])
	bps := 1
	if maxval > 255 {
		bps = 2
	}
	nb := w * h * channels * bps
	switch rng.IntN(8) {
	case 0:
		nb -= 1 + rng.IntN(nb)
	case 1:
		nb += rng.IntN(5)
	}
	for range nb {
		if rng.IntN(4) == 0 {
			b.WriteByte(0xff)
		} else {
			b.WriteByte(byte(rng.IntN(256)))
		}
	}
	return b.Bytes()
}
