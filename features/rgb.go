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
	set := func(y, x int, r, g, bl uint8) {
		i := y*w + x
		out.Pix[i], out.Pix[h*w+i], out.Pix[2*h*w+i] = r, g, bl
	}
	switch m := img.(type) {
	case *image.Gray:
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				v := m.Pix[y*m.Stride+x]
				set(y, x, v, v, v)
			}
		}
	case *image.NRGBA:
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				p := m.Pix[y*m.Stride+4*x:]
				set(y, x, p[0], p[1], p[2])
			}
		}
	case *image.Paletted:
		pal := make([][3]uint8, len(m.Palette))
		for i, c := range m.Palette {
			pal[i] = rgbOf(c)
		}
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				idx := int(m.Pix[y*m.Stride+x])
				var p [3]uint8
				if idx < len(pal) {
					p = pal[idx]
				}
				set(y, x, p[0], p[1], p[2])
			}
		}
	default:
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				p := rgbOf(img.At(b.Min.X+x, b.Min.Y+y))
				set(y, x, p[0], p[1], p[2])
			}
		}
	}
	return out
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
