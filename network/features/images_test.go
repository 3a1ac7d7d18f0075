package features

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image"
	"image/color"
	stdjpeg "image/jpeg"
	"image/png"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/format/jpeg"

	"golang.org/x/image/bmp"
	"golang.org/x/image/tiff"
)

// TestToRGB checks the conversions of PIL's convert("RGB").
func TestToRGB(t *testing.T) {
	gray := image.NewGray(image.Rect(0, 0, 2, 1))
	gray.Pix = []uint8{10, 200}
	nrgba := image.NewNRGBA(image.Rect(0, 0, 2, 1))
	copy(nrgba.Pix, []uint8{255, 0, 0, 128, 1, 2, 3, 0}) // half-transparent red, invisible (1,2,3)
	pal := image.NewPaletted(image.Rect(0, 0, 2, 1), color.Palette{color.NRGBA{9, 8, 7, 255}, color.NRGBA{50, 60, 70, 10}})
	pal.Pix = []uint8{1, 0}
	rgba := image.NewRGBA(image.Rect(0, 0, 2, 1))
	copy(rgba.Pix, []uint8{100, 50, 0, 200, 4, 5, 6, 255}) // premultiplied
	g16 := image.NewGray16(image.Rect(0, 0, 2, 1))
	g16.SetGray16(0, 0, color.Gray16{Y: 0x1234})
	g16.SetGray16(1, 0, color.Gray16{Y: 200})
	pal2 := image.NewPaletted(image.Rect(0, 0, 2, 1), color.Palette{color.NRGBA{9, 8, 7, 255}})
	pal2.Pix = []uint8{0, 77}
	// A sub-image must be read from its own bounds, not the parent's.
	sub := image.NewNRGBA(image.Rect(0, 0, 3, 1))
	copy(sub.Pix, []uint8{1, 1, 1, 255, 2, 3, 4, 255, 5, 6, 7, 255})

	for _, tc := range []struct {
		name string
		img  image.Image
		want []uint8 // R plane, G plane, B plane
	}{
		{"gray", gray, []uint8{10, 200, 10, 200, 10, 200}},
		{"nrgba alpha dropped, not composited", nrgba, []uint8{255, 1, 0, 2, 0, 3}},
		{"palette", pal, []uint8{50, 9, 60, 8, 70, 7}},
		{"premultiplied rgba", rgba, []uint8{127, 4, 63, 5, 0, 6}},
		{"gray16 clipped, as PIL's mode I", g16, []uint8{255, 200, 255, 200, 255, 200}},
		{"index past the palette is grey", pal2, []uint8{9, 77, 8, 77, 7, 77}},
		{"sub-image", sub.SubImage(image.Rect(1, 0, 3, 1)), []uint8{2, 5, 3, 6, 4, 7}},
	} {
		got := ToRGB(tc.img)
		if got.H != 1 || got.W != 2 || !bytes.Equal(got.Pix, tc.want) {
			t.Errorf("%s: got %dx%d %v, want %v", tc.name, got.W, got.H, got.Pix, tc.want)
		}
	}
}

// hugePNG returns a tiny PNG whose header declares w×h pixels.
func hugePNG(w, h uint32) []byte { return headerPNG(w, h, 8, 2) }

// headerPNG returns a tiny PNG whose header declares w×h pixels of bit
// depth depth and colour type ctype (2 RGB, 6 RGBA), and whose data is
// one empty block: decoding its pixels fails.
func headerPNG(w, h uint32, depth, ctype byte) []byte {
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	chunk := func(typ string, data []byte) {
		binary.Write(&b, binary.BigEndian, uint32(len(data)))
		b.WriteString(typ)
		b.Write(data)
		binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(append([]byte(typ), data...)))
	}
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], w)
	binary.BigEndian.PutUint32(ihdr[4:], h)
	ihdr[8], ihdr[9] = depth, ctype
	chunk("IHDR", ihdr)
	chunk("IDAT", []byte{0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01})
	chunk("IEND", nil)
	return b.Bytes()
}

func TestListAndDecode(t *testing.T) {
	dir := t.TempDir()
	img := image.NewNRGBA(image.Rect(0, 0, 5, 3))
	for i := range img.Pix {
		img.Pix[i] = uint8(i * 7)
	}
	write := func(name string, enc func(*bytes.Buffer) error) {
		var b bytes.Buffer
		if err := enc(&b); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("b.PNG", func(b *bytes.Buffer) error { return png.Encode(b, img) })
	write("a.bmp", func(b *bytes.Buffer) error { return bmp.Encode(b, img) })
	write("c.TIFF", func(b *bytes.Buffer) error { return tiff.Encode(b, img, nil) })
	write("d.jpeg", func(b *bytes.Buffer) error { return stdjpeg.Encode(b, img, nil) })
	write("notes.txt", func(b *bytes.Buffer) error { b.WriteString("x"); return nil })
	write("sub/e.jpg", func(b *bytes.Buffer) error { return stdjpeg.Encode(b, img, nil) })
	write("f.PPM", func(b *bytes.Buffer) error {
		b.WriteString("P6\n5 3\n255\n")
		for i := 0; i < len(img.Pix); i += 4 {
			b.Write(img.Pix[i : i+3])
		}
		return nil
	})
	names, err := ListImages(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	var base []string
	for _, n := range names {
		base = append(base, strings.TrimPrefix(n, dir+string(filepath.Separator)))
	}
	if got := strings.Join(base, " "); got != "a.bmp b.PNG c.TIFF d.jpeg f.PPM" {
		t.Errorf("listing %q", got)
	}
	all, err := ListImages(dir, true)
	if err != nil || len(all) != 6 || !strings.HasSuffix(all[5], filepath.Join("sub", "e.jpg")) {
		t.Errorf("recursive listing %v, %v", all, err)
	}
	for _, n := range all {
		m, err := decodeFile(n)
		if err != nil {
			t.Fatal(err)
		}
		if b := m.Bounds(); b.Dx() != 5 || b.Dy() != 3 {
			t.Errorf("%s: %v", n, b)
		}
		// Lossless formats keep the colours (alpha dropped).
		if !strings.HasSuffix(n, "jpeg") && !strings.HasSuffix(n, "jpg") {
			rgb := ToRGB(m)
			if rgb.Pix[0] != img.Pix[0] || rgb.Pix[15+1] != img.Pix[4+1] {
				t.Errorf("%s: pixels changed", n)
			}
		}
	}

	// Bad inputs: each a one-line *fault.InputError.
	bad := t.TempDir()
	huge := filepath.Join(bad, "huge.png")
	os.WriteFile(huge, hugePNG(100000, 100000), 0o644)
	broken := filepath.Join(bad, "broken.jpg")
	os.WriteFile(broken, []byte("not a jpeg"), 0o644)
	prog, err := os.ReadFile(filepath.Join("testdata", "progressive.jpg"))
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(bad, "cut.jpg")
	os.WriteFile(cut, prog[:len(prog)*2/3], 0o644)
	plain := filepath.Join(bad, "plain.pgm")
	os.WriteFile(plain, []byte("P2 1 1 255 0"), 0o644)
	fifo := filepath.Join(t.TempDir(), "pipe.png")
	fifoErr := syscall.Mkfifo(fifo, 0o644)
	empty := t.TempDir()
	for _, tc := range []struct {
		name string
		run  func() error
		want string
	}{
		{"huge", func() error { _, err := decodeFile(huge); return err }, "declares a 100000x100000 image"},
		{"broken", func() error { _, err := decodeFile(broken); return err }, "not a readable image"},
		{"truncated JPEG", func() error { _, err := decodeFile(cut); return err }, "cut.jpg: not a valid jpeg file: truncated"},
		{"plain PGM", func() error { _, err := decodeFile(plain); return err }, "P2 files (plain or bitmap) are not read"},
		{"fifo decode", func() error { _, err := decodeFile(fifo); return err }, "not a regular file"},
		{"fifo listing", func() error { _, err := ListImages(filepath.Dir(fifo), false); return err }, "not a regular file"},
		{"empty folder", func() error { _, err := ListImages(empty, false); return err }, "holds no images"},
		{"not a folder", func() error { _, err := ListImages(huge, false); return err }, "is not a folder"},
	} {
		if strings.HasPrefix(tc.name, "fifo") && fifoErr != nil {
			t.Logf("%s: skipped, mkfifo: %v", tc.name, fifoErr)
			continue
		}
		err := tc.run()
		var ie *fault.InputError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: got %v, want a one-line InputError with %q", tc.name, err, tc.want)
		}
	}
	if len(hugePNG(1, 1)) > 80 {
		t.Errorf("huge PNG fixture is %d bytes", len(hugePNG(1, 1)))
	}
}

// decodeFile decodes a host image file as the feature pipeline does.
func decodeFile(path string) (image.Image, error) { return DecodeImage(dataio.HostFS, path) }

// A folder whose images are all in subfolders (an ImageFolder data set)
// says to use the recursive option, spelled by each transport; with it
// the images are found, and a folder without any image says only that.
func TestListImagesHintsRecursive(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"cat/a.png", "dog/b.JPG", "notes/readme.txt"} {
		os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755)
		os.WriteFile(filepath.Join(dir, p), []byte("x"), 0o644)
	}
	_, err := ListImages(dir, false)
	var ie *fault.InputError
	if !errors.As(err, &ie) {
		t.Fatalf("got %v, want an InputError", err)
	}
	flag := ie.Render(func(f string) string { return "--" + f })
	if !strings.Contains(flag, "its subfolders do ("+filepath.Join(dir, "cat", "a.png")+"): use --recursive to include them") {
		t.Errorf("command line: %s", flag)
	}
	if !strings.Contains(err.Error(), "use recursive to include them") {
		t.Errorf("service: %s", err)
	}
	if got, err := ListImages(dir, true); err != nil || len(got) != 2 {
		t.Errorf("recursive: %q, %v", got, err)
	}
	none := t.TempDir()
	os.MkdirAll(filepath.Join(none, "sub"), 0o755)
	os.WriteFile(filepath.Join(none, "sub", "x.txt"), []byte("x"), 0o644)
	if _, err := ListImages(none, false); err == nil || strings.Contains(err.Error(), "recursive") {
		t.Errorf("no images anywhere: %v", err)
	}
}

// TestToRGBFastPaths: the decoders' own image types, read from their
// pixel arrays, give the bits of the generic img.At path, sub-images and
// every chroma subsampling included, without one allocation per pixel.
func TestToRGBFastPaths(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	fill := func(p []uint8) {
		for i := range p {
			p[i] = uint8(rng.IntN(256))
		}
	}
	r := image.Rect(0, 0, 37, 23)
	gray := image.NewGray(r)
	fill(gray.Pix)
	nrgba := image.NewNRGBA(r)
	fill(nrgba.Pix)
	rgba := image.NewRGBA(r)
	fill(rgba.Pix)
	for i := 3; i < len(rgba.Pix); i += 4 { // opaque, transparent and translucent pixels
		switch i / 4 % 3 {
		case 0:
			rgba.Pix[i] = 0xff
		case 1:
			rgba.Pix[i], rgba.Pix[i-1], rgba.Pix[i-2], rgba.Pix[i-3] = 0, 0, 0, 0
		default:
			a := rgba.Pix[i]
			rgba.Pix[i-1], rgba.Pix[i-2], rgba.Pix[i-3] = min(rgba.Pix[i-1], a), min(rgba.Pix[i-2], a), min(rgba.Pix[i-3], a)
		}
	}
	pal := image.NewPaletted(r, color.Palette{color.NRGBA{9, 8, 7, 255}, color.NRGBA{50, 60, 70, 10}, color.Gray{3}})
	for i := range pal.Pix {
		pal.Pix[i] = uint8(rng.IntN(6)) // past the palette too, where img.At panics
	}
	gray16 := image.NewGray16(r)
	for i := 0; i < len(gray16.Pix); i += 2 {
		v := rng.IntN(600) // both sides of PIL's clipping at 255
		gray16.Pix[i], gray16.Pix[i+1] = uint8(v>>8), uint8(v)
	}
	imgs := map[string]image.Image{"gray": gray, "nrgba": nrgba, "rgba": rgba, "paletted": pal, "gray16": gray16}
	for _, ratio := range []image.YCbCrSubsampleRatio{image.YCbCrSubsampleRatio444, image.YCbCrSubsampleRatio422,
		image.YCbCrSubsampleRatio420, image.YCbCrSubsampleRatio440, image.YCbCrSubsampleRatio411, image.YCbCrSubsampleRatio410} {
		m := image.NewYCbCr(r, ratio)
		fill(m.Y)
		fill(m.Cb)
		fill(m.Cr)
		imgs["ycbcr "+ratio.String()] = m
	}
	for name, img := range imgs {
		for _, b := range []image.Rectangle{img.Bounds(), image.Rect(3, 5, 30, 20)} {
			if b != img.Bounds() {
				img = img.(interface {
					SubImage(image.Rectangle) image.Image
				}).SubImage(b)
			}
			want := &RGB{H: b.Dy(), W: b.Dx(), Pix: make([]uint8, 3*b.Dx()*b.Dy())}
			toRGBAt(img, want)
			if got := ToRGB(img); got.H != want.H || got.W != want.W || !bytes.Equal(got.Pix, want.Pix) {
				t.Errorf("%s %v: the fast path differs from img.At's", name, b)
			}
		}
		if allocs := testing.AllocsPerRun(3, func() { ToRGB(img) }); allocs > 10 {
			t.Errorf("%s: %v allocations for %d pixels", name, allocs, r.Dx()*r.Dy())
		}
	}
	// The JPEG decoder's packed RGB, which has no sub-images.
	jp := &jpeg.RGBImage{Width: r.Dx(), Height: r.Dy(), Pix: make([]uint8, 3*r.Dx()*r.Dy())}
	fill(jp.Pix)
	want := &RGB{H: r.Dy(), W: r.Dx(), Pix: make([]uint8, 3*r.Dx()*r.Dy())}
	toRGBAt(jp, want)
	if got := ToRGB(jp); !bytes.Equal(got.Pix, want.Pix) {
		t.Error("jpeg.RGBImage: the fast path differs from img.At's")
	}
	if allocs := testing.AllocsPerRun(3, func() { ToRGB(jp) }); allocs > 10 {
		t.Errorf("jpeg.RGBImage: %v allocations", allocs)
	}
}
