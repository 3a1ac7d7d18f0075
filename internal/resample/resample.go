package resample

import (
	"fmt"
	"math"
)

// Filter is a Pillow resampling filter.
type Filter int

const (
	// Bilinear is Pillow's Image.BILINEAR: the triangle filter, support 1.
	Bilinear Filter = iota + 1
	// Bicubic is Pillow's Image.BICUBIC: Keys' cubic convolution with
	// a = −0.5, support 2.
	Bicubic
)

// String returns Pillow's name of the filter.
func (f Filter) String() string {
	switch f {
	case Bilinear:
		return "bilinear"
	case Bicubic:
		return "bicubic"
	}
	return fmt.Sprintf("Filter(%d)", int(f))
}

// support is the half-width of the filter at scale 1.
func (f Filter) support() float64 {
	if f == Bicubic {
		return 2
	}
	return 1
}

// eval is the filter's kernel. Every product is converted explicitly so
// that the compiler cannot fuse it into a multiply-add: Pillow's C is
// compiled without FMA, and a fused rounding would change the last bit
// of a weight, and then an 8-bit output that sits on a rounding
// boundary.
func (f Filter) eval(x float64) float64 {
	if x < 0 {
		x = -x
	}
	switch f {
	case Bicubic:
		const a = -0.5
		if x < 1 {
			// ((a + 2)·x − (a + 3))·x·x + 1
			t := float64((a+2)*x) - (a + 3)
			return float64(float64(t*x)*x) + 1
		}
		if x < 2 {
			// (((x − 5)·x + 8)·x − 4)·a
			t := float64((x-5)*x) + 8
			t = float64(t*x) - 4
			return t * a
		}
		return 0
	case Bilinear:
		if x < 1 {
			return 1 - x
		}
		return 0
	}
	return 0
}

// MaxSize bounds each input and output dimension. Pillow's own limit is
// the int overflow of its coefficient buffer; this one keeps the int32
// arithmetic far from overflow and the weight tables small.
const MaxSize = 1 << 16

// precision is Pillow's PRECISION_BITS: 32 bits of int, 8 for the pixel,
// 2 of headroom for sums of weights above 1 and negative lobes.
const precision = 32 - 8 - 2

// taps are the weights of one 1-D pass from in to out samples.
type taps struct {
	in, out int
	ksize   int       // weights per output sample (the row stride of k)
	start   []int     // first input sample of output i
	n       []int     // number of input samples of output i
	k       []float64 // normalised weights, out×ksize
	fixed   []int32   // k in fixed point (precision fractional bits)
}

// newTaps computes the weights as Pillow's precompute_coeffs does for
// the whole image (box from 0 to in).
func newTaps(in, out int, f Filter) *taps { return newTapsRange(in, out, 0, out, f) }

// newTapsRange computes the weights of outputs first to first+count−1 of
// a pass from in to out samples, each exactly as newTaps computes it
// (an output's weights depend on its index alone): the taps of a window
// of a resize whose whole output would not fit in memory.
func newTapsRange(in, out, first, count int, f Filter) *taps {
	scale := float64(in) / float64(out)
	filterscale := scale
	if filterscale < 1 {
		filterscale = 1
	}
	support := f.support() * filterscale
	ksize := int(math.Ceil(support))*2 + 1
	t := &taps{
		in: in, out: count, ksize: ksize,
		start: make([]int, count), n: make([]int, count),
		k: make([]float64, count*ksize), fixed: make([]int32, count*ksize),
	}
	ss := 1 / filterscale
	for i := 0; i < count; i++ {
		center := float64(float64(first+i)+0.5) * scale
		// int() in C truncates toward zero; the clamp at 0 makes that
		// equal to a floor wherever it matters.
		lo := int(center - support + 0.5)
		if lo < 0 {
			lo = 0
		}
		hi := int(center + support + 0.5)
		if hi > in {
			hi = in
		}
		n := hi - lo
		k := t.k[i*ksize : i*ksize+ksize]
		sum := 0.0
		for j := 0; j < n; j++ {
			// (x + xmin − center + 0.5)·ss, left to right as in C.
			w := f.eval(float64(float64(j+lo)-center+0.5) * ss)
			k[j] = w
			sum += w
		}
		if sum != 0 {
			for j := 0; j < n; j++ {
				k[j] /= sum
			}
		}
		for j := range k {
			// Round half away from zero: C's (int)(v ± 0.5) truncates.
			v := float64(k[j] * (1 << precision))
			if k[j] < 0 {
				t.fixed[i*ksize+j] = int32(-0.5 + v)
			} else {
				t.fixed[i*ksize+j] = int32(0.5 + v)
			}
		}
		t.start[i], t.n[i] = lo, n
	}
	return t
}

// Plan resizes planes of W×H samples to OW×OH with one filter. It is
// immutable after NewPlan and safe for concurrent use.
type Plan struct {
	W, H, OW, OH int
	Filter       Filter
	hor, ver     *taps // nil when that dimension keeps its size
	rowLo, rowHi int   // input rows the vertical pass reads
}

// NewPlan computes the weights of a resize from w×h to ow×oh (width ×
// height, Pillow's order). Sizes must be in [1, MaxSize].
func NewPlan(w, h, ow, oh int, f Filter) (*Plan, error) {
	if f != Bilinear && f != Bicubic {
		return nil, fmt.Errorf("resample: unsupported filter %v", f)
	}
	for _, s := range []int{w, h, ow, oh} {
		if s < 1 || s > MaxSize {
			return nil, fmt.Errorf("resample: size %dx%d to %dx%d out of range [1, %d]", w, h, ow, oh, MaxSize)
		}
	}
	p := &Plan{W: w, H: h, OW: ow, OH: oh, Filter: f, rowLo: 0, rowHi: h}
	if ow != w {
		p.hor = newTaps(w, ow, f)
	}
	if oh != h {
		p.ver = newTaps(h, oh, f)
		// Pillow's horizontal pass only computes the rows the vertical
		// pass reads; the result is the same, and so is the work saved.
		p.rowLo = p.ver.start[0]
		p.rowHi = p.ver.start[oh-1] + p.ver.n[oh-1]
		if p.hor != nil {
			for i := range p.ver.start {
				p.ver.start[i] -= p.rowLo
			}
		}
	}
	return p, nil
}

// planes checks the slice lengths and returns how many planes they hold.
func (p *Plan) planes(ndst, nsrc int) int {
	in, out := p.W*p.H, p.OW*p.OH
	c := nsrc / in
	if nsrc%in != 0 || c < 1 || ndst != c*out {
		panic(fmt.Sprintf("resample: %d source and %d destination samples for planes of %dx%d to %dx%d",
			nsrc, ndst, p.W, p.H, p.OW, p.OH))
	}
	return c
}

// clip8 is Pillow's clip8: the fixed-point sum shifted down to an integer
// (an arithmetic shift, so negative sums floor) and clamped to a byte.
func clip8(s int32) uint8 {
	v := s >> precision
	if v < 0 {
		return 0
	}
	if v > 255 {
		return 255
	}
	return uint8(v)
}

// Uint8 resizes src, one or more W×H planes of 8-bit samples (row-major,
// plane after plane, e.g. the R, G and B planes of an RGB image), into
// dst, as many OW×OH planes, as Pillow resizes an 8-bit image. It panics
// if the lengths are not whole planes of the plan's sizes.
func (p *Plan) Uint8(dst, src []uint8) {
	c := p.planes(len(dst), len(src))
	in, out := p.W*p.H, p.OW*p.OH
	var tmp []uint8
	if p.hor != nil && p.ver != nil {
		tmp = make([]uint8, (p.rowHi-p.rowLo)*p.OW)
	}
	for ch := 0; ch < c; ch++ {
		s, d := src[ch*in:(ch+1)*in], dst[ch*out:(ch+1)*out]
		switch {
		case p.hor != nil && p.ver != nil:
			horizontal8(tmp, s[p.rowLo*p.W:p.rowHi*p.W], p.W, p.hor)
			vertical8(d, tmp, p.OW, p.ver)
		case p.hor != nil:
			horizontal8(d, s, p.W, p.hor)
		case p.ver != nil:
			vertical8(d, s, p.W, p.ver)
		default:
			copy(d, s)
		}
	}
}

func horizontal8(dst, src []uint8, w int, t *taps) {
	rows := len(src) / w
	for y := 0; y < rows; y++ {
		row := src[y*w : (y+1)*w]
		out := dst[y*t.out : (y+1)*t.out]
		for x := range out {
			k := t.fixed[x*t.ksize:]
			in := row[t.start[x] : t.start[x]+t.n[x]]
			s := int32(1 << (precision - 1))
			for j, v := range in {
				s += int32(v) * k[j]
			}
			out[x] = clip8(s)
		}
	}
}

// vertical8 sums whole rows into acc, input row after input row: each
// output sample still adds its taps in Pillow's order (which for integers
// would not matter anyway), and the rows are read contiguously.
func vertical8(dst, src []uint8, w int, t *taps) {
	acc := make([]int32, w)
	for y := 0; y < t.out; y++ {
		k := t.fixed[y*t.ksize:]
		lo, n := t.start[y], t.n[y]
		for x := range acc {
			acc[x] = 1 << (precision - 1)
		}
		for j := 0; j < n; j++ {
			kj := k[j]
			row := src[(lo+j)*w : (lo+j+1)*w]
			for x, v := range row {
				acc[x] += int32(v) * kj
			}
		}
		out := dst[y*w : (y+1)*w]
		for x, s := range acc {
			out[x] = clip8(s)
		}
	}
}

// Float32 resizes src, one or more W×H planes of float32 samples, into
// dst, as many OW×OH planes, as Pillow resizes an image of mode F. It
// panics if the lengths are not whole planes of the plan's sizes.
func (p *Plan) Float32(dst, src []float32) {
	c := p.planes(len(dst), len(src))
	in, out := p.W*p.H, p.OW*p.OH
	var tmp []float32
	if p.hor != nil && p.ver != nil {
		tmp = make([]float32, (p.rowHi-p.rowLo)*p.OW)
	}
	for ch := 0; ch < c; ch++ {
		s, d := src[ch*in:(ch+1)*in], dst[ch*out:(ch+1)*out]
		switch {
		case p.hor != nil && p.ver != nil:
			horizontal32(tmp, s[p.rowLo*p.W:p.rowHi*p.W], p.W, p.hor)
			vertical32(d, tmp, p.OW, p.ver)
		case p.hor != nil:
			horizontal32(d, s, p.W, p.hor)
		case p.ver != nil:
			vertical32(d, s, p.W, p.ver)
		default:
			copy(d, s)
		}
	}
}

// horizontal32 accumulates in float64, as Pillow's
// ImagingResampleHorizontal_32bpc does (a double sum of float pixels
// times double weights), and rounds to float32 once per output.
func horizontal32(dst, src []float32, w int, t *taps) {
	rows := len(src) / w
	for y := 0; y < rows; y++ {
		row := src[y*w : (y+1)*w]
		out := dst[y*t.out : (y+1)*t.out]
		for x := range out {
			k := t.k[x*t.ksize:]
			in := row[t.start[x] : t.start[x]+t.n[x]]
			s := 0.0
			for j, v := range in {
				s += float64(float64(v) * k[j])
			}
			out[x] = float32(s)
		}
	}
}

// vertical32 sums whole rows as vertical8 does; each output's float64
// sum still adds its taps in Pillow's order, so rounding is unchanged.
func vertical32(dst, src []float32, w int, t *taps) {
	acc := make([]float64, w)
	for y := 0; y < t.out; y++ {
		k := t.k[y*t.ksize:]
		lo, n := t.start[y], t.n[y]
		clear(acc)
		for j := 0; j < n; j++ {
			kj := k[j]
			row := src[(lo+j)*w : (lo+j+1)*w]
			for x, v := range row {
				acc[x] += float64(float64(v) * kj)
			}
		}
		out := dst[y*w : (y+1)*w]
		for x, s := range acc {
			out[x] = float32(s)
		}
	}
}

// Uint8 resizes the planes in src (each w×h) to ow×oh as Pillow does for
// 8-bit images; see Plan.Uint8.
func Uint8(src []uint8, w, h, ow, oh int, f Filter) ([]uint8, error) {
	p, err := NewPlan(w, h, ow, oh, f)
	if err != nil {
		return nil, err
	}
	if len(src) == 0 || len(src)%(w*h) != 0 {
		return nil, fmt.Errorf("resample: %d samples are not whole %dx%d planes", len(src), w, h)
	}
	dst := make([]uint8, len(src)/(w*h)*ow*oh)
	p.Uint8(dst, src)
	return dst, nil
}

// Float32 resizes the planes in src (each w×h) to ow×oh as Pillow does
// for images of mode F; see Plan.Float32.
func Float32(src []float32, w, h, ow, oh int, f Filter) ([]float32, error) {
	p, err := NewPlan(w, h, ow, oh, f)
	if err != nil {
		return nil, err
	}
	if len(src) == 0 || len(src)%(w*h) != 0 {
		return nil, fmt.Errorf("resample: %d samples are not whole %dx%d planes", len(src), w, h)
	}
	dst := make([]float32, len(src)/(w*h)*ow*oh)
	p.Float32(dst, src)
	return dst, nil
}
