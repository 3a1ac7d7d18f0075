package features

import (
	"image"
	"image/color"

	"github.com/genlens/genlens/internal/format/jpeg"
)

// RGB is an 8-bit RGB image, channels first (3×H×W), the tensor that
// torchvision's pil_to_tensor gives for a PIL image in mode "RGB".
type RGB struct {
	H, W int
	Pix  []uint8
}

// ToRGB converts img as PIL's Image.convert("RGB") does: grey is copied
// to the three channels, alpha is dropped without compositing (the
// stored, non-premultiplied colour is kept), palette indices are looked
// up (an index past the palette is grey, index i giving (i, i, i)),
// 16-bit colour keeps the high byte of each sample, and 16-bit grey,
// which PIL holds as mode "I", is clipped to 255 (1000 gives 255, not
// 1000>>8).
func ToRGB(img image.Image) *RGB {
	b := img.Bounds()
	h, w := b.Dy(), b.Dx()
	out := &RGB{H: h, W: w, Pix: make([]uint8, 3*h*w)}
	// The decoders' own types are read from their pixel arrays: through
	// img.At every pixel's colour is boxed in an interface, one
	// allocation per pixel, which made a PNG's conversion cost more than
	// its decoding. Each case gives the bits of the generic path below.
	r, g, bl := out.Pix[:h*w], out.Pix[h*w:2*h*w], out.Pix[2*h*w:]
	switch m := img.(type) {
	case *jpeg.RGBImage:
		for i := 0; i < h*w; i++ {
			p := m.Pix[3*i : 3*i+3]
			r[i], g[i], bl[i] = p[0], p[1], p[2]
		}
	case *image.Gray16:
		for y := 0; y < h; y++ {
			row := m.Pix[m.PixOffset(b.Min.X, b.Min.Y+y):][:2*w]
			for x, i := 0, y*w; x < w; x, i = x+1, i+1 {
				v := uint8(0xff)
				if row[2*x] == 0 {
					v = row[2*x+1]
				}
				r[i], g[i], bl[i] = v, v, v
			}
		}
	case *image.Gray:
		for y := 0; y < h; y++ {
			row := m.Pix[m.PixOffset(b.Min.X, b.Min.Y+y):][:w]
			copy(r[y*w:], row)
			copy(g[y*w:], row)
			copy(bl[y*w:], row)
		}
	case *image.NRGBA:
		for y := 0; y < h; y++ {
			row := m.Pix[m.PixOffset(b.Min.X, b.Min.Y+y):][:4*w]
			for x, i := 0, y*w; x < w; x, i = x+1, i+1 {
				r[i], g[i], bl[i] = row[4*x], row[4*x+1], row[4*x+2]
			}
		}
	case *image.RGBA:
		for y := 0; y < h; y++ {
			row := m.Pix[m.PixOffset(b.Min.X, b.Min.Y+y):][:4*w]
			for x, i := 0, y*w; x < w; x, i = x+1, i+1 {
				p := unpremultiply(color.RGBA{row[4*x], row[4*x+1], row[4*x+2], row[4*x+3]})
				r[i], g[i], bl[i] = p[0], p[1], p[2]
			}
		}
	case *image.YCbCr:
		for y := 0; y < h; y++ {
			for x, i := 0, y*w; x < w; x, i = x+1, i+1 {
				yi, ci := m.YOffset(b.Min.X+x, b.Min.Y+y), m.COffset(b.Min.X+x, b.Min.Y+y)
				// color.YCbCr's own 16-bit conversion, whose high
				// bytes the generic path keeps (it is opaque).
				cr, cg, cb, _ := color.YCbCr{Y: m.Y[yi], Cb: m.Cb[ci], Cr: m.Cr[ci]}.RGBA()
				r[i], g[i], bl[i] = uint8(cr>>8), uint8(cg>>8), uint8(cb>>8)
			}
		}
	case *image.Paletted:
		var pal [256][3]uint8
		for i := range pal {
			if i < len(m.Palette) {
				pal[i] = rgbOf(m.Palette[i])
			} else {
				pal[i] = [3]uint8{uint8(i), uint8(i), uint8(i)}
			}
		}
		for y := 0; y < h; y++ {
			row := m.Pix[m.PixOffset(b.Min.X, b.Min.Y+y):][:w]
			for x, i := 0, y*w; x < w; x, i = x+1, i+1 {
				p := pal[row[x]]
				r[i], g[i], bl[i] = p[0], p[1], p[2]
			}
		}
	default:
		toRGBAt(img, out)
	}
	return out
}

// toRGBAt converts any image into out pixel by pixel through img.At.
func toRGBAt(img image.Image, out *RGB) {
	b := img.Bounds()
	h, w := out.H, out.W
	pm, _ := img.(*image.Paletted)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			var p [3]uint8
			switch {
			case pm == nil:
				p = rgbOf(img.At(b.Min.X+x, b.Min.Y+y))
			case int(pm.ColorIndexAt(b.Min.X+x, b.Min.Y+y)) < len(pm.Palette):
				p = rgbOf(pm.Palette[pm.ColorIndexAt(b.Min.X+x, b.Min.Y+y)])
			default: // past the palette, where img.At would panic
				c := pm.ColorIndexAt(b.Min.X+x, b.Min.Y+y)
				p = [3]uint8{c, c, c}
			}
			i := y*w + x
			out.Pix[i], out.Pix[h*w+i], out.Pix[2*h*w+i] = p[0], p[1], p[2]
		}
	}
}

// unpremultiply returns the colour of a premultiplied pixel as PIL's
// "RGBa" unpacker computes it (a TIFF with associated alpha is the only
// file that Go's decoders return premultiplied and translucent):
// c·255/a truncated and clipped at 255, black where a is 0.
func unpremultiply(c color.RGBA) [3]uint8 {
	switch c.A {
	case 0xff:
		return [3]uint8{c.R, c.G, c.B}
	case 0:
		return [3]uint8{}
	}
	a := int(c.A)
	f := func(v uint8) uint8 { return uint8(min(255, int(v)*255/a)) }
	return [3]uint8{f(c.R), f(c.G), f(c.B)}
}

// rgbOf returns the non-premultiplied 8-bit colour of c: PIL stores
// straight (not premultiplied) alpha and drops it, so a half-transparent
// red pixel stays pure red.
func rgbOf(c color.Color) [3]uint8 {
	switch v := c.(type) {
	case color.NRGBA:
		return [3]uint8{v.R, v.G, v.B}
	case color.Gray:
		return [3]uint8{v.Y, v.Y, v.Y}
	case color.Gray16:
		y := uint8(min(v.Y, 0xff))
		return [3]uint8{y, y, y}
	case color.RGBA:
		return unpremultiply(v)
	}
	n := color.NRGBA64Model.Convert(c).(color.NRGBA64)
	return [3]uint8{uint8(n.R >> 8), uint8(n.G >> 8), uint8(n.B >> 8)}
}
