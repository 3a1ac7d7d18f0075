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
		// Each output pair is 3/4 of its sample and 1/4 of the neighbour
		// on its side, rounding alternately down and up; the edges use
		// the edge sample as its own neighbour.
		n := c.cw
		in := c.plane[y*c.stride : y*c.stride+n]
		out := u.buf[:2*n]
		last, this := int(in[0]), int(in[0])
		for x := 0; x < n; x++ {
			next := this
			if x+1 < n {
				next = int(in[x+1])
			}
			o := out[2*x : 2*x+2 : 2*x+2]
			o[0] = uint8((this*3 + last + 1) >> 2)
			o[1] = uint8((this*3 + next + 2) >> 2)
			last, this = this, next
		}
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
		// Vertically 3/4 of the nearer row and 1/4 of the other, then the
		// same across on those column sums, rounding as jdsample.c does.
		r := y >> 1
		near := r - 1
		if y&1 != 0 {
			near = r + 1
		}
		near = min(max(near, 0), c.ch-1)
		n := c.cw
		in := c.plane[r*c.stride : r*c.stride+n]
		nb := c.plane[near*c.stride : near*c.stride+n]
		out := u.buf[:2*n]
		this := int(in[0])*3 + int(nb[0])
		last := this
		for x := 0; x < n; x++ {
			next := this
			if x+1 < n {
				next = int(in[x+1])*3 + int(nb[x+1])
			}
			o := out[2*x : 2*x+2 : 2*x+2]
			o[0] = uint8((this*3 + last + 8) >> 4)
			o[1] = uint8((this*3 + next + 7) >> 4)
			last, this = this, next
		}
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
		}
	}
	// The common 4:2:0 layout upsamples and converts in one pass.
	fused420 := d.colorSpace == YCbCr && ups[0].method == upFull &&
		ups[1].method == upH2V2 && ups[2].method == upH2V2 && d.comps[1].cw == d.comps[2].cw
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
			if fused420 {
				d.ycc420Row(out, y)
				continue
			}
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

// limit clamps v to [0, 255] for v in [-512, 511], by table lookup, as
// libjpeg-turbo's range_limit does; the colour conversion stays within
// [-227, 482].
var limit = func() (t [1024]uint8) {
	for i := range t {
		t[i] = uint8(min(max(i-512, 0), 255))
	}
	return t
}()

func yccRow(out, yy, cb, cr []byte) {
	n := len(yy)
	cb = cb[:n]
	cr = cr[:n]
	out = out[:3*n]
	for x := 0; x < n; x++ {
		Y := int32(yy[x]) + 512
		b, r := cb[x], cr[x]
		o := out[3*x : 3*x+3 : 3*x+3]
		o[0] = limit[(Y+crR[r])&1023]
		o[1] = limit[(Y+(cbG[b]+crG[r])>>scaleBits)&1023]
		o[2] = limit[(Y+cbB[b])&1023]
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

// ycc420Row produces image row y of a YCbCr image whose chroma is
// subsampled 2×2 and upsampled with the h2v2 triangular filter: the same
// arithmetic as upsampler.row followed by yccRow, without the buffers.
func (d *decoder) ycc420Row(out []byte, y int) {
	w := d.width
	yc, bc, rc := &d.comps[0], &d.comps[1], &d.comps[2]
	r := y >> 1
	near := r - 1
	if y&1 != 0 {
		near = r + 1
	}
	near = min(max(near, 0), bc.ch-1)
	n := bc.cw
	b0 := bc.plane[r*bc.stride : r*bc.stride+n]
	b1 := bc.plane[near*bc.stride : near*bc.stride+n]
	r0 := rc.plane[r*rc.stride : r*rc.stride+n]
	r1 := rc.plane[near*rc.stride : near*rc.stride+n]
	yy := yc.plane[y*yc.stride : y*yc.stride+w]
	out = out[:3*w]
	bThis := int32(b0[0])*3 + int32(b1[0])
	rThis := int32(r0[0])*3 + int32(r1[0])
	bLast, rLast := bThis, rThis
	for x := 0; x < n; x++ {
		bNext, rNext := bThis, rThis
		if x+1 < n {
			bNext = int32(b0[x+1])*3 + int32(b1[x+1])
			rNext = int32(r0[x+1])*3 + int32(r1[x+1])
		}
		cb := uint8((bThis*3 + bLast + 8) >> 4)
		cr := uint8((rThis*3 + rLast + 8) >> 4)
		X := 2 * x
		Y := int32(yy[X]) + 512
		o := out[3*X : 3*X+3 : 3*X+3]
		o[0] = limit[(Y+crR[cr])&1023]
		o[1] = limit[(Y+(cbG[cb]+crG[cr])>>scaleBits)&1023]
		o[2] = limit[(Y+cbB[cb])&1023]
		if X+1 < w {
			cb = uint8((bThis*3 + bNext + 7) >> 4)
			cr = uint8((rThis*3 + rNext + 7) >> 4)
			Y = int32(yy[X+1]) + 512
			o = out[3*X+3 : 3*X+6 : 3*X+6]
			o[0] = limit[(Y+crR[cr])&1023]
			o[1] = limit[(Y+(cbG[cb]+crG[cr])>>scaleBits)&1023]
			o[2] = limit[(Y+cbB[cb])&1023]
		}
		bLast, bThis = bThis, bNext
		rLast, rThis = rThis, rNext
	}
}
