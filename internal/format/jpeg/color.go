package jpeg

import "fmt"

// YCbCr to RGB follows jdcolor.c: 16-bit fixed point, with the red and
// blue terms rounded in their tables and the green sum rounded by the
// ONE_HALF folded into the Cb table.
const scaleBits = 16

func fix(x float64) int32 { return int32(x*(1<<scaleBits) + 0.5) }

var crR, cbB, crG, cbG [256]int32

func init() {
	for i := range 256 {
		x := int32(i - 128)
		crR[i] = (fix(1.40200)*x + 1<<(scaleBits-1)) >> scaleBits
		cbB[i] = (fix(1.77200)*x + 1<<(scaleBits-1)) >> scaleBits
		crG[i] = -fix(0.71414) * x
		cbG[i] = -fix(0.34414)*x + 1<<(scaleBits-1)
	}
}

func clampU8(v int32) uint8 {
	if uint32(v) > 255 {
		if v < 0 {
			return 0
		}
		return 255
	}
	return uint8(v)
}

// Upsampling methods, chosen as libjpeg-turbo's jinit_upsampler chooses
// them with do_fancy_upsampling on.
const (
	upFull      = iota // same size as the image
	upH2V1             // triangular filter across, for ratio 2×1
	upH1V2             // triangular filter down, for ratio 1×2
	upH2V2             // triangular filter both ways, for ratio 2×2
	upReplicate        // any other integral ratio: copy each sample
)

func (c *component) method() int {
	switch {
	case c.hr == 1 && c.vr == 1:
		return upFull
	// The triangular filters need three columns; narrower components are
	// replicated.
	case c.hr == 2 && c.vr == 1 && c.cw > 2:
		return upH2V1
	case c.hr == 1 && c.vr == 2:
		return upH1V2
	case c.hr == 2 && c.vr == 2 && c.cw > 2:
		return upH2V2
	}
	return upReplicate
}

// upsampler produces the rows of one component at full image size.
type upsampler struct {
	c      *component
	method int
	buf    []byte
	sums   []int32
}

// row returns the component's samples for image row y, at least width of
// them. Rows and columns beyond the component's size are its edge samples
// repeated, as libjpeg-turbo's context rows are.
func (u *upsampler) row(y, width int) []byte {
	c := u.c
	switch u.method {
	case upFull:
		return c.plane[y*c.stride : y*c.stride+width]
	case upH2V1:
		in := c.plane[y*c.stride : y*c.stride+c.cw]
		out := u.buf[:2*len(in)]
		n := len(in)
		out[0] = in[0]
		out[1] = uint8((int(in[0])*3 + int(in[1]) + 2) >> 2)
		for x := 1; x < n-1; x++ {
			v := int(in[x]) * 3
			out[2*x] = uint8((v + int(in[x-1]) + 1) >> 2)
			out[2*x+1] = uint8((v + int(in[x+1]) + 2) >> 2)
		}
		out[2*n-2] = uint8((int(in[n-1])*3 + int(in[n-2]) + 1) >> 2)
		out[2*n-1] = in[n-1]
		return out
	case upH1V2:
		r := y >> 1
		near, bias := r-1, 1
		if y&1 != 0 {
			near, bias = r+1, 2
		}
		near = min(max(near, 0), c.ch-1)
		in := c.plane[r*c.stride : r*c.stride+c.cw]
		nb := c.plane[near*c.stride : near*c.stride+c.cw]
		out := u.buf[:len(in)]
		for x := range in {
			out[x] = uint8((int(in[x])*3 + int(nb[x]) + bias) >> 2)
		}
		return out
	case upH2V2:
		r := y >> 1
		near := r - 1
		if y&1 != 0 {
			near = r + 1
		}
		near = min(max(near, 0), c.ch-1)
		in := c.plane[r*c.stride : r*c.stride+c.cw]
		nb := c.plane[near*c.stride : near*c.stride+c.cw]
		n := len(in)
		s := u.sums[:n]
		for x := range s {
			s[x] = int32(in[x])*3 + int32(nb[x])
		}
		out := u.buf[:2*n]
		out[0] = uint8((s[0]*4 + 8) >> 4)
		out[1] = uint8((s[0]*3 + s[1] + 7) >> 4)
		for x := 1; x < n-1; x++ {
			v := s[x] * 3
			out[2*x] = uint8((v + s[x-1] + 8) >> 4)
			out[2*x+1] = uint8((v + s[x+1] + 7) >> 4)
		}
		out[2*n-2] = uint8((s[n-1]*3 + s[n-2] + 8) >> 4)
		out[2*n-1] = uint8((s[n-1]*4 + 7) >> 4)
		return out
	}
	in := c.plane[(y/c.vr)*c.stride:]
	out := u.buf[:width]
	if c.hr == 1 {
		copy(out, in[:width])
		return out
	}
	for x := range out {
		out[x] = in[x/c.hr]
	}
	return out
}

// finish checks that the scans described the whole image, runs the
// inverse DCT of buffered coefficients and converts to RGB.
func (d *decoder) finish() (*RGBImage, error) {
	for i := 0; i < d.ncomp; i++ {
		c := &d.comps[i]
		if !c.seen {
			return nil, fmt.Errorf("jpeg: component %d has no scan", c.id)
		}
	}
	if d.progressive {
		if err := d.checkComplete(); err != nil {
			return nil, err
		}
	}
	if d.buffered {
		for i := 0; i < d.ncomp; i++ {
			c := &d.comps[i]
			for by := 0; by < c.bh; by++ {
				for bx := 0; bx < c.bw; bx++ {
					blk := (*[64]int16)(c.coef[(by*c.bw+bx)*64:])
					idct(c.plane[by*8*c.stride+bx*8:], c.stride, blk, &c.qt)
				}
			}
			c.coef = nil
		}
	}
	return d.render(), nil
}

// checkComplete refuses a progressive image whose scans leave coefficients
// unknown. libjpeg-turbo would fill in a missing DC term with zero (grey)
// and smooth blocks whose first nine AC coefficients are incomplete
// (jdcoefct.c's block smoothing, which this package does not implement).
func (d *decoder) checkComplete() error {
	// Block smoothing is skipped when any of these quantizers is zero.
	smoothable := true
	for i := 0; i < d.ncomp; i++ {
		c := &d.comps[i]
		if c.coefBits[0] < 0 {
			return fmt.Errorf("jpeg: truncated: component %d has no DC scan", c.id)
		}
		for _, k := range [...]int{0, 1, 8, 16, 9, 2, 3, 10, 17, 24} {
			if c.qt[k] == 0 {
				smoothable = false
			}
		}
	}
	if !smoothable {
		return nil
	}
	for i := 0; i < d.ncomp; i++ {
		c := &d.comps[i]
		for k := 1; k <= 9; k++ {
			if c.coefBits[k] != 0 {
				return fmt.Errorf("jpeg: progressive scans leave coefficient %d of component %d incomplete "+
					"(libjpeg-turbo would apply block smoothing, which is not implemented)", k, c.id)
			}
		}
	}
	return nil
}

func (d *decoder) render() *RGBImage {
	w, h := d.width, d.height
	img := &RGBImage{Pix: make([]byte, 3*w*h), Width: w, Height: h}
	var ups [4]upsampler
	for i := 0; i < d.ncomp; i++ {
		c := &d.comps[i]
		ups[i] = upsampler{c: c, method: c.method()}
		if ups[i].method != upFull {
			ups[i].buf = make([]byte, max(2*c.cw, w))
			ups[i].sums = make([]int32, c.cw)
		}
	}
	for y := 0; y < h; y++ {
		out := img.Pix[3*w*y : 3*w*(y+1)]
		switch d.colorSpace {
		case Gray:
			g := ups[0].row(y, w)[:w]
			for x, v := range g {
				o := (*[3]byte)(out[3*x:])
				o[0], o[1], o[2] = v, v, v
			}
		case YCbCr:
			yy := ups[0].row(y, w)[:w]
			cb := ups[1].row(y, w)[:w]
			cr := ups[2].row(y, w)[:w]
			yccRow(out, yy, cb, cr)
		case RGB:
			r := ups[0].row(y, w)[:w]
			g := ups[1].row(y, w)[:w]
			b := ups[2].row(y, w)[:w]
			for x := range r {
				o := (*[3]byte)(out[3*x:])
				o[0], o[1], o[2] = r[x], g[x], b[x]
			}
		case CMYK, YCCK:
			c0 := ups[0].row(y, w)[:w]
			c1 := ups[1].row(y, w)[:w]
			c2 := ups[2].row(y, w)[:w]
			c3 := ups[3].row(y, w)[:w]
			cmykRow(out, c0, c1, c2, c3, d.colorSpace == YCCK)
		}
	}
	return img
}

func yccRow(out, yy, cb, cr []byte) {
	cb = cb[:len(yy)]
	cr = cr[:len(yy)]
	out = out[:3*len(yy)]
	for x, y := range yy {
		Y := int32(y)
		b, r := cb[x], cr[x]
		o := (*[3]byte)(out[3*x:])
		o[0] = clampU8(Y + crR[r])
		o[1] = clampU8(Y + (cbG[b]+crG[r])>>scaleBits)
		o[2] = clampU8(Y + cbB[b])
	}
}

// cmykRow converts what libjpeg-turbo outputs for a four-component image
// (CMYK, after its YCCK conversion when there is one) to RGB as Pillow
// does: it reads the bytes as Adobe-inverted CMYK ("CMYK;I", inverting
// each), then applies cmyk2rgb, R = 255-K - (255-K)·C/255 with Pillow's
// rounded division by 255.
func cmykRow(out, c0, c1, c2, k []byte, ycck bool) {
	for x := range c0 {
		a, b, c := c0[x], c1[x], c2[x]
		if ycck {
			Y := int32(a)
			cb, cr := b, c
			a = clampU8(255 - (Y + crR[cr]))
			b = clampU8(255 - (Y + (cbG[cb]+crG[cr])>>scaleBits))
			c = clampU8(255 - (Y + cbB[cb]))
		}
		nk := int32(k[x]) // 255 - inverted K
		o := (*[3]byte)(out[3*x:])
		o[0] = clampU8(nk - mulDiv255(255-int32(a), nk))
		o[1] = clampU8(nk - mulDiv255(255-int32(b), nk))
		o[2] = clampU8(nk - mulDiv255(255-int32(c), nk))
	}
}

// mulDiv255 is Pillow's MULDIV255: a·b/255 rounded.
func mulDiv255(a, b int32) int32 {
	t := a*b + 128
	return ((t >> 8) + t) >> 8
}
