package resample

import (
	"bytes"
	"fmt"
	"testing"
)

// A window of a resize is, byte for byte, the same window cropped out of
// the whole resize (which the Pillow fixtures check), whichever passes
// run: both, one, or none; for windows at the edges and inside.
func TestUint8Window(t *testing.T) {
	for _, c := range []struct {
		w, h, ow, oh int
		f            Filter
	}{
		{7, 40, 30, 171, Bicubic}, // both up: CLIP's short side of a tall image
		{40, 7, 171, 30, Bicubic}, // wide
		{64, 48, 20, 15, Bicubic}, // both down
		{9, 50, 9, 23, Bilinear},  // vertical only
		{50, 9, 23, 9, Bicubic},   // horizontal only
		{12, 10, 12, 10, Bicubic}, // none
		{1, 30, 8, 240, Bicubic},  // a one-pixel-wide image
	} {
		src := bytesOf("noise", splitmix(uint64(c.w*1000+c.h), 3*c.w*c.h))
		whole, err := Uint8(src, c.w, c.h, c.ow, c.oh, c.f)
		if err != nil {
			t.Fatal(err)
		}
		for _, win := range [][4]int{{0, 0, c.ow, c.oh}, {0, 0, 3, 4}, {c.ow - 5, c.oh - 2, 5, 2}, {c.ow / 3, c.oh / 2, c.ow / 3, c.oh / 4}} {
			x0, y0, cw, ch := win[0], win[1], max(win[2], 1), max(win[3], 1)
			name := fmt.Sprintf("%dx%d to %dx%d window %dx%d at (%d, %d)", c.w, c.h, c.ow, c.oh, cw, ch, x0, y0)
			got, err := Uint8Window(src, c.w, c.h, c.ow, c.oh, x0, y0, cw, ch, c.f)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			want := make([]uint8, 0, 3*cw*ch)
			for p := 0; p < 3; p++ {
				for y := y0; y < y0+ch; y++ {
					off := p*c.ow*c.oh + y*c.ow + x0
					want = append(want, whole[off:off+cw]...)
				}
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s: differs from the cropped resize", name)
			}
		}
	}
	// A window outside the resize, or of nothing, is refused.
	src := make([]uint8, 12)
	for _, win := range [][4]int{{-1, 0, 2, 2}, {0, 0, 0, 2}, {9, 0, 2, 2}, {0, 9, 2, 2}} {
		if _, err := Uint8Window(src, 2, 2, 10, 10, win[0], win[1], win[2], win[3], Bicubic); err == nil {
			t.Errorf("window %v of a 10x10 resize: no error", win)
		}
	}
}

// The 224×224 centre of a 1×20000 image's CLIP resize (224×4,480,000,
// 3 GB whole) reads a few input rows and makes only the window.
func TestUint8WindowElongated(t *testing.T) {
	src := bytesOf("noise", splitmix(5, 3*20000))
	oh := 224 * 20000
	got, err := Uint8Window(src, 1, 20000, 224, oh, 0, (oh-224)/2, 224, 224, Bicubic)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3*224*224 {
		t.Fatalf("%d samples, want %d", len(got), 3*224*224)
	}
	// The column is constant across each row (a one-pixel-wide source),
	// so every row of the window is one value repeated.
	for y := 0; y < 224; y++ {
		row := got[y*224 : (y+1)*224]
		for _, v := range row {
			if v != row[0] {
				t.Fatalf("row %d is not constant: %v", y, row[:8])
			}
		}
	}
	if testing.AllocsPerRun(1, func() {
		Uint8Window(src, 1, 20000, 224, oh, 0, (oh-224)/2, 224, 224, Bicubic)
	}) > 20 {
		t.Error("too many allocations")
	}
}
