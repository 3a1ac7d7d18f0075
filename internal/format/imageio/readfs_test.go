package imageio

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"testing/fstest"
	"time"

	"github.com/genlens/genlens/fault"
)

// hugePNG returns a valid PNG signature and IHDR declaring a w×h 8-bit
// grey image, with one empty IDAT and IEND: 65 bytes that would decode
// to 10 GB.
func hugePNG(w, h uint32) []byte {
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	chunk := func(typ string, data []byte) {
		binary.Write(&b, binary.BigEndian, uint32(len(data)))
		c := append([]byte(typ), data...)
		b.Write(c)
		binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(c))
	}
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], w)
	binary.BigEndian.PutUint32(ihdr[4:], h)
	ihdr[8] = 8 // bit depth; colour type 0 (grey)
	chunk("IHDR", ihdr)
	chunk("IDAT", []byte{0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01})
	chunk("IEND", nil)
	return b.Bytes()
}

func pngBytes(t *testing.T, v uint8) []byte {
	t.Helper()
	img := image.NewGray(image.Rect(0, 0, 2, 2))
	for i := range img.Pix {
		img.Pix[i] = v + uint8(i)
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestReadFS(t *testing.T) {
	fsys := fstest.MapFS{
		"faces/a.png": {Data: pngBytes(t, 0)},
		"faces/b.png": {Data: pngBytes(t, 10)},
		"faces/x.txt": {Data: []byte("not an image")},
		"huge/a.png":  {Data: hugePNG(100000, 100000)},
	}
	s, err := ReadFS(fsys, "faces", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Len() != 2 || s.Shape != (Shape{2, 2, 1}) {
		t.Fatalf("got %d images of %v, want 2 of 2x2", s.Len(), s.Shape)
	}
	if got, want := s.Images.At(1, 0), 2*10.0/255-1; math.Abs(got-want) > 1e-12 {
		t.Errorf("pixel = %g, want %g", got, want)
	}

	_, err = ReadFS(fsys, "huge", Options{})
	var ie *fault.InputError
	if !errors.As(err, &ie) || ie.File != "huge/a.png" || !strings.Contains(err.Error(), "100000x100000") {
		t.Fatalf("err = %v, want an InputError on huge/a.png naming 100000x100000", err)
	}
}

// TestReadPNGFolderFIFO: a named pipe called x.png must be refused at
// once, not block waiting for a writer.
func TestReadPNGFolderFIFO(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.png"), pngBytes(t, 0), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "x.png"), 0o644); err != nil {
		t.Skip("no named pipes here:", err)
	}
	done := make(chan error, 1)
	go func() { _, err := Read(dir, Options{}); done <- err }()
	select {
	case err := <-done:
		var ie *fault.InputError
		if !errors.As(err, &ie) || !strings.HasSuffix(ie.File, "x.png") || !strings.Contains(err.Error(), "not a regular file") {
			t.Fatalf("err = %v, want an InputError: x.png is not a regular file", err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("reading a folder with a FIFO named x.png hangs")
	}
}
