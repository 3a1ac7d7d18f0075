package resample

import "fmt"

// Uint8Window resizes the planes in src (each w×h) to ow×oh as Uint8
// does, but returns only the cw×ch window at (x0, y0) of each resized
// plane: sample for sample what cropping Uint8's output would give, with
// the weights and the horizontal pass computed for the window alone.
//
// A resize followed by a crop (CLIP's short side to 224, then the centre
// 224×224) of an elongated image asks for a huge intermediate: a 1×20000
// image becomes 224×4,480,000, 3 GB of RGB, of which 150 KB are kept.
// The window's cost is bounded by the window and the input rows it
// reads, so ow and oh are not bounded by MaxSize here; w and h must be
// positive and the window inside ow×oh.
func Uint8Window(src []uint8, w, h, ow, oh, x0, y0, cw, ch int, f Filter) ([]uint8, error) {
	if f != Bilinear && f != Bicubic {
		return nil, fmt.Errorf("resample: unsupported filter %v", f)
	}
	if w < 1 || h < 1 || ow < 1 || oh < 1 || cw < 1 || ch < 1 || x0 < 0 || y0 < 0 || x0 > ow-cw || y0 > oh-ch {
		return nil, fmt.Errorf("resample: window %dx%d at (%d, %d) of %dx%d resized to %dx%d", cw, ch, x0, y0, w, h, ow, oh)
	}
	if len(src) == 0 || len(src)%(w*h) != 0 {
		return nil, fmt.Errorf("resample: %d samples are not whole %dx%d planes", len(src), w, h)
	}
	var hor, ver *taps
	if ow != w {
		hor = newTapsRange(w, ow, x0, cw, f)
	}
	// The input rows the window reads: those of its vertical taps, or
	// its own rows when the height is kept.
	rowLo, rowHi := y0, y0+ch
	if oh != h {
		ver = newTapsRange(h, oh, y0, ch, f)
		rowLo, rowHi = ver.start[0], ver.start[ch-1]+ver.n[ch-1]
		for i := range ver.start {
			ver.start[i] -= rowLo
		}
	}
	planes := len(src) / (w * h)
	dst := make([]uint8, planes*cw*ch)
	// tmp holds the window's columns of the rows read, after the
	// horizontal pass (rounded to 8 bits, as Pillow keeps them) or as
	// they are when the width is kept.
	tmp := make([]uint8, (rowHi-rowLo)*cw)
	for c := 0; c < planes; c++ {
		s := src[c*w*h : (c+1)*w*h]
		rows := s[rowLo*w : rowHi*w]
		if hor != nil {
			horizontal8(tmp, rows, w, hor)
		} else {
			for y := 0; y < rowHi-rowLo; y++ {
				copy(tmp[y*cw:(y+1)*cw], rows[y*w+x0:])
			}
		}
		d := dst[c*cw*ch : (c+1)*cw*ch]
		if ver != nil {
			vertical8(d, tmp, cw, ver)
		} else {
			copy(d, tmp)
		}
	}
	return dst, nil
}
