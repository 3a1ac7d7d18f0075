package features

import (
	"image"
	"image/color"
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
// up, 16-bit samples keep their high byte.
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
				p := row[4*x : 4*x+4]
				if a := p[3]; a != 0xff && a != 0 {
					// Premultiplied and translucent: un-premultiply in
					// 16 bits as color.NRGBA64Model does.
					cr, cg, cb, ca := color.RGBA{p[0], p[1], p[2], a}.RGBA()
					r[i], g[i], bl[i] = uint8((cr*0xffff/ca)>>8), uint8((cg*0xffff/ca)>>8), uint8((cb*0xffff/ca)>>8)
					continue
				}
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
		pal := make([][3]uint8, len(m.Palette))
		for i, c := range m.Palette {
			pal[i] = rgbOf(c)
		}
		for y := 0; y < h; y++ {
			row := m.Pix[m.PixOffset(b.Min.X, b.Min.Y+y):][:w]
			for x, i := 0, y*w; x < w; x, i = x+1, i+1 {
				var p [3]uint8
				if idx := int(row[x]); idx < len(pal) {
					p = pal[idx]
				}
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
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			p := rgbOf(img.At(b.Min.X+x, b.Min.Y+y))
			i := y*w + x
			out.Pix[i], out.Pix[h*w+i], out.Pix[2*h*w+i] = p[0], p[1], p[2]
		}
	}
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
	case color.RGBA:
		if v.A == 0xff || v.A == 0 {
			return [3]uint8{v.R, v.G, v.B}
		}
	}
	n := color.NRGBA64Model.Convert(c).(color.NRGBA64)
	return [3]uint8{uint8(n.R >> 8), uint8(n.G >> 8), uint8(n.B >> 8)}
}
