package inception

import (
	"context"
	"sync"

	"github.com/genlens/genlens/internal/tensor/linalg"
	"github.com/genlens/genlens/internal/tensor/simdblas"
)

// fmap is one image's feature map, channels first (C×H×W), PyTorch's
// layout: a channel is a contiguous H·W plane, so concatenating branches
// is writing each branch's GEMM output at a channel offset.
type fmap struct {
	c, h, w int
	d       []float32
}

// arena hands out the feature maps of one image from a few large slabs
// and takes them all back at once when the image is done: a forward pass
// makes over a hundred maps, tens of megabytes, and allocating them from the heap made the
// garbage collector stop the convolutions several times per image. Maps
// are not zeroed: every map is entirely written by the convolution or
// pool that produces it.
type arena struct {
	slabs  [][]float32
	i, off int
	// scratch is the im2col and Winograd buffer of the image's
	// convolutions, kept with the arena between images: allocated anew
	// for each image, its few megabytes of fresh pages (faulted in and
	// zeroed) cost the three Winograd layers of the stem more than
	// their arithmetic, 7-8 ms per layer.
	scratch []float32
}

const slabSize = 1 << 22 // 16 MB of float32

func (a *arena) alloc(n int) []float32 {
	for a.i < len(a.slabs) {
		s := a.slabs[a.i]
		if a.off+n <= len(s) {
			a.off += n
			return s[a.off-n : a.off : a.off]
		}
		a.i++
		a.off = 0
	}
	a.slabs = append(a.slabs, make([]float32, max(n, slabSize)))
	a.i, a.off = len(a.slabs)-1, n
	return a.slabs[a.i][:n:n]
}

func (a *arena) reset() { a.i, a.off = 0, 0 }

// keep takes every map back except x, which it moves to the start of the
// arena (copy is a memmove, so x may overlap its new place). The forward
// pass keeps only the map between blocks: the maps of a block die with
// it, and without this an image held all of them, three slabs rather
// than one, which the garbage collector's headroom doubles in peak RSS.
func (a *arena) keep(x fmap) fmap {
	a.reset()
	y := a.fmap(x.c, x.h, x.w)
	copy(y.d, x.d)
	return y
}

// arenas holds the arenas of finished images for the next ones. It is a
// plain list, not a sync.Pool: the garbage collector empties a pool, and
// the next batch then faulted in (and the kernel zeroed) tens of
// megabytes of fresh slabs per worker again. It holds at most one arena
// per image that ran at once.
var arenas struct {
	mu   sync.Mutex
	free []*arena
}

func getArena() *arena {
	arenas.mu.Lock()
	defer arenas.mu.Unlock()
	if n := len(arenas.free); n > 0 {
		a := arenas.free[n-1]
		arenas.free = arenas.free[:n-1]
		return a
	}
	return new(arena)
}

func putArena(a *arena) {
	a.reset()
	arenas.mu.Lock()
	arenas.free = append(arenas.free, a)
	arenas.mu.Unlock()
}

func (a *arena) fmap(c, h, w int) fmap { return fmap{c, h, w, a.alloc(c * h * w)} }

// outSize is the spatial size a convolution or pool gives.
func outSize(in, k, stride, pad int) int { return (in+2*pad-k)/stride + 1 }

// apply runs the folded convolution and ReLU on in and writes the result
// into channels [c0, c0+cout) of dst, allocating dst when it is nil.
func (cv *conv) apply(in fmap, dst *fmap, c0 int, scratch *[]float32, ar *arena) fmap {
	ho, wo := outSize(in.h, cv.kh, cv.stride, cv.ph), outSize(in.w, cv.kw, cv.stride, cv.pw)
	if dst == nil {
		f := ar.fmap(cv.cout, ho, wo)
		dst, c0 = &f, 0
	}
	n := ho * wo
	out := dst.d[c0*n : (c0+cv.cout)*n]
	if cv.wg != nil {
		cv.applyWinograd(in, out, ho, wo, scratch)
		return *dst
	}
	if cv.w1 != nil {
		cv.applyWinograd1D(in, out, scratch)
		return *dst
	}
	k := cv.cin * cv.kh * cv.kw
	if cv.packed == nil {
		// Start from the bias, then accumulate W·col on top (beta = 1).
		// The row is filled by doubling copies, which run as vector
		// moves. (The packed kernel starts its tiles from the bias.)
		for o := 0; o < cv.cout; o++ {
			row := out[o*n : (o+1)*n]
			row[0] = cv.b[o]
			for done := 1; done < n; done *= 2 {
				copy(row[done:], row[:done])
			}
		}
	}
	if cv.kh == 1 && cv.kw == 1 && cv.stride == 1 {
		// A 1×1 convolution is the weight matrix times the input map
		// itself (cin × H·W): no im2col copy.
		cv.gemm(in.d, n, out[0:], n)
	} else if cv.packed != nil {
		// The kernel's panels of the im2col matrix are written straight
		// from the map, a kc×nc block at a time: no matrix, no copy of it
		// into the panels, and the whole map in one product, which reads
		// the weights once rather than once per band.
		simdblas.MulPackedBiasPanels(cv.packed, n, func(dst []float32, p0, kc, j0, nc, nr int) {
			im2colPanel(in, cv, wo, dst, p0, kc, j0, nc, nr)
		}, cv.b, out, n, true)
	} else {
		// im2col a band of output pixels at a time, small enough to stay
		// in L2 while the product packs it: the whole matrix of the stem
		// convolutions (25 MB) made them memory-bound at a fifth of the
		// speed of the others. Bands are whole 32-column slivers of the
		// kernel where they can be.
		nb := max(64, colBlock/k/32*32)
		for j0 := 0; j0 < n; j0 += nb {
			j1 := min(n, j0+nb)
			col := im2col(in, cv, wo, j0, j1, scratch)
			cv.gemm(col, j1-j0, out[j0:], n)
		}
	}
	if cv.packed == nil {
		simdblas.ReLU(out)
	}
	return *dst
}

// applyAvgPooled is apply (ReLU included) on the average pool of in,
// for a 1×1 convolution: computed as ReLU(avgpool(W·in) + b), which is
// ReLU(W·avgpool(in) + b) because both the pool and the convolution are
// linear and the pool's mean of the constant b is b. The pool branches
// of the network have fewer output than input channels (32 of 192 in
// Mixed_5b, 192 of 768 in Mixed_6), so pooling after the product pools a
// quarter to a sixth of the channels. The sums differ from the pool-first
// order's by rounding only.
func (cv *conv) applyAvgPooled(in fmap, dst *fmap, c0 int, ar *arena) {
	n := in.h * in.w
	t := ar.fmap(cv.cout, in.h, in.w)
	if cv.packed != nil {
		zero := ar.alloc(cv.cout)
		clear(zero)
		simdblas.MulPackedBias(cv.packed, n, in.d, n, zero, t.d, n, false)
	} else {
		linalg.Sgemm(false, false, cv.cout, n, cv.cin, 1, cv.w, cv.cin, in.d, n, 0, t.d, n)
	}
	p := avgPool(t, ar)
	out := dst.d[c0*n : (c0+cv.cout)*n]
	for o, b := range cv.b[:cv.cout] {
		src, row := p.d[o*n:(o+1)*n], out[o*n:(o+1)*n]
		for j, v := range src {
			row[j] = max(v+b, 0)
		}
	}
}

// colBlock bounds one band of the im2col matrix, in values (512 KB).
const colBlock = 1 << 17

// gemm computes W·b into c, where b is k×nb (row stride nb) and c is
// cout×nb with row stride ldc. With the packed weights it writes
// ReLU(W·b + bias), the bias and the clamp applied by the kernel as it
// starts and stores each tile; otherwise it adds W·b to c, which apply
// has filled with the bias, and apply clamps in a pass of its own.
func (cv *conv) gemm(b []float32, nb int, c []float32, ldc int) {
	if cv.packed != nil {
		simdblas.MulPackedBias(cv.packed, nb, b, nb, cv.b, c, ldc, true)
		return
	}
	k := cv.cin * cv.kh * cv.kw
	linalg.Sgemm(false, false, cv.cout, nb, k, 1, cv.w, k, b, nb, 1, c, ldc)
}

// im2col lays out the receptive fields of output pixels [j0, j1) (in
// row-major order over the wo-wide output) as columns: row (c·kh+i)·kw+j,
// column p−j0 holds in[c][oy·s+i−ph][ox·s+j−pw] for p = oy·wo+ox, zero
// outside the map (zero padding). It reuses *scratch, one buffer per
// goroutine, rather than allocate for every layer of every image.
func im2col(in fmap, cv *conv, wo, j0, j1 int, scratch *[]float32) []float32 {
	nb := j1 - j0
	size := cv.cin * cv.kh * cv.kw * nb
	if cap(*scratch) < size {
		*scratch = make([]float32, size)
	}
	col := (*scratch)[:size]
	s := cv.stride
	for c := 0; c < in.c; c++ {
		plane := in.d[c*in.h*in.w : (c+1)*in.h*in.w]
		for i := 0; i < cv.kh; i++ {
			for j := 0; j < cv.kw; j++ {
				row := col[((c*cv.kh+i)*cv.kw+j)*nb:][:nb]
				for p := j0; p < j1; {
					oy, ox0 := p/wo, p%wo
					ox1 := min(wo, ox0+j1-p) // end of this output row within the band
					dst := row[p-j0 : p-j0+ox1-ox0]
					p += ox1 - ox0
					iy := oy*s + i - cv.ph
					if iy < 0 || iy >= in.h {
						clear(dst)
						continue
					}
					src := plane[iy*in.w : (iy+1)*in.w]
					if s == 1 {
						// Valid ox satisfy 0 <= ox+j−pw < in.w.
						lo := max(ox0, cv.pw-j)
						hi := min(ox1, in.w+cv.pw-j)
						if lo >= hi {
							clear(dst)
							continue
						}
						clear(dst[:lo-ox0])
						copy(dst[lo-ox0:hi-ox0], src[lo+j-cv.pw:hi+j-cv.pw])
						clear(dst[hi-ox0:])
						continue
					}
					for ox := ox0; ox < ox1; ox++ {
						ix := ox*s + j - cv.pw
						if ix >= 0 && ix < in.w {
							dst[ox-ox0] = src[ix]
						} else {
							dst[ox-ox0] = 0
						}
					}
				}
			}
		}
	}
	return col
}

// im2colPanel writes rows [p0, p0+kc) and columns [j0, j0+nc) of the
// im2col matrix of im2col (all output pixels) in the packed layout of
// simdblas.PanelFunc: slivers of nr columns, each kc rows of nr values,
// the columns past nc zero. A row of a sliver is filled by runs that end
// at the sliver's edge or at the end of an output row.
func im2colPanel(in fmap, cv *conv, wo int, dst []float32, p0, kc, j0, nc, nr int) {
	if cv.stride == 1 && wo == in.w && outSize(in.h, cv.kh, 1, cv.ph) == in.h {
		im2colPanelSame(in, cv, dst, p0, kc, j0, nc, nr)
		return
	}
	if cv.ph == 0 && cv.pw == 0 && nr <= maxNR {
		im2colPanelValid(in, cv, wo, dst, p0, kc, j0, nc, nr)
		return
	}
	im2colPanelAny(in, cv, wo, dst, p0, kc, j0, nc, nr)
}

// maxNR bounds the sliver width of im2colPanelValid.
const maxNR = 32

// im2colPanelValid is im2colPanel for an unpadded convolution (the
// stride-2 ones of the network): every tap of every output pixel lies
// inside the map, so row r of a sliver is the input plane of r's channel
// read at the sliver's pixel offsets (s·oy·w + s·ox, computed once per
// sliver) plus r's tap offset (i·w + j). The general path splits each
// sliver at every output row and tests every tap against the map's edge,
// which made the stride-2 layers run at half the kernel's speed.
func im2colPanelValid(in fmap, cv *conv, wo int, dst []float32, p0, kc, j0, nc, nr int) {
	s, hw, khw := cv.stride, in.h*in.w, cv.kh*cv.kw
	var pix [maxNR]int32
	var tapOff [maxTaps]int
	for t := range khw {
		tapOff[t] = t/cv.kw*in.w + t%cv.kw
	}
	c0, ij0 := p0/khw, p0%khw
	for q0 := 0; q0 < nc; q0 += nr {
		cnt := min(nr, nc-q0)
		oy, ox := (j0+q0)/wo, (j0+q0)%wo
		for q := range cnt {
			pix[q] = int32(s*oy*in.w + s*ox)
			if ox++; ox == wo {
				oy, ox = oy+1, 0
			}
		}
		idx := pix[:cnt]
		if nr == 32 && khw <= maxTaps {
			simdblas.GatherIdx32(dst[q0*kc:], kc, in.d, c0*hw, hw, ij0, tapOff[:khw], idx)
			continue
		}
		sl := dst[q0*kc : (q0+nr)*kc]
		c, i, j := c0, ij0/cv.kw, ij0%cv.kw
		for r := range kc {
			src := in.d[c*hw+i*in.w+j:]
			row := sl[r*nr : (r+1)*nr]
			for q, o := range idx {
				row[q] = src[o]
			}
			clear(row[cnt:])
			if j++; j == cv.kw {
				if j, i = 0, i+1; i == cv.kh {
					i, c = 0, c+1
				}
			}
		}
	}
}

// im2colPanelAny is im2colPanel for any stride and padding.
func im2colPanelAny(in fmap, cv *conv, wo int, dst []float32, p0, kc, j0, nc, nr int) {
	s, khw := cv.stride, cv.kh*cv.kw
	oy0, ox0 := j0/wo, j0%wo
	for r := p0; r < p0+kc; r++ {
		c, ij := r/khw, r%khw
		i, j := ij/cv.kw, ij%cv.kw
		plane := in.d[c*in.h*in.w : (c+1)*in.h*in.w]
		row := dst[(r-p0)*nr:]
		// (oy, ox) is the output pixel of panel column q, which is
		// column off of sliver sl; all advance together, with no division.
		oy, ox, sl, off := oy0, ox0, 0, 0
		for q := 0; q < nc; {
			cnt := min(nr-off, wo-ox, nc-q)
			d := row[sl*kc*nr+off:][:cnt]
			x0, x1, iy := ox, ox+cnt, oy*s+i-cv.ph
			if q += cnt; off+cnt == nr {
				sl, off = sl+1, 0
			} else {
				off += cnt
			}
			if ox = x1; ox == wo {
				oy, ox = oy+1, 0
			}
			if iy < 0 || iy >= in.h {
				clear(d)
				continue
			}
			src := plane[iy*in.w : (iy+1)*in.w]
			if s == 1 {
				lo := max(x0, cv.pw-j)
				hi := min(x1, in.w+cv.pw-j)
				if lo >= hi {
					clear(d)
					continue
				}
				if lo > x0 {
					clear(d[:lo-x0])
				}
				copy(d[lo-x0:hi-x0], src[lo+j-cv.pw:hi+j-cv.pw])
				if hi < x1 {
					clear(d[hi-x0:])
				}
				continue
			}
			for x := x0; x < x1; x++ {
				if ix := x*s + j - cv.pw; ix >= 0 && ix < in.w {
					d[x-x0] = src[ix]
				} else {
					d[x-x0] = 0
				}
			}
		}
		if rem := nc % nr; rem != 0 {
			clear(row[(nc/nr)*kc*nr+rem:][:nr-rem])
		}
	}
}

// im2colPanelSame is im2colPanel for a stride-1 convolution whose
// output has the input's size (the padding half the kernel): there the
// tap (i, j) of output pixel p reads input pixel p + (i−ph)·w + (j−pw)
// of the flattened plane, so a sliver's row is one contiguous run of the
// plane, zero where it leaves the plane (the rows above and below), with
// the |j−pw| pixels at each output row's left or right edge, which wrap
// to the neighbouring row, set to zero afterwards. The general path
// splits every sliver at each output row and copies the pieces, which on
// the 17- and 8-wide maps of the later blocks took longer than the copy.
func im2colPanelSame(in fmap, cv *conv, dst []float32, p0, kc, j0, nc, nr int) {
	w, hw, khw := in.w, in.h*in.w, cv.kh*cv.kw
	if nr == 32 && khw <= maxTaps {
		im2colPanelSame32(in, cv, dst, p0, kc, j0, nc)
		return
	}
	for r := p0; r < p0+kc; r++ {
		c, ij := r/khw, r%khw
		di, dj := ij/cv.kw-cv.ph, ij%cv.kw-cv.pw
		plane := in.d[c*hw : (c+1)*hw]
		row := dst[(r-p0)*nr:]
		for q0 := 0; q0 < nc; q0 += nr {
			cnt := min(nr, nc-q0)
			d := row[q0/nr*kc*nr:][:cnt]
			p := j0 + q0
			src := p + di*w + dj // the input pixel of column q0
			lo, hi := max(src, 0), min(src+cnt, hw)
			if lo >= hi {
				clear(d)
				continue
			}
			clear(d[:lo-src])
			copy(d[lo-src:hi-src], plane[lo:hi])
			clear(d[hi-src:])
			if dj == 0 {
				continue
			}
			// Zero the columns whose tap falls left of the map (dj < 0,
			// the first −dj of each output row) or right of it (dj > 0,
			// the last dj).
			for rs := p - p%w; rs < p+cnt; rs += w {
				a, b := rs, rs-dj
				if dj > 0 {
					a, b = rs+w-dj, rs+w
				}
				for x := max(a, p); x < min(b, p+cnt); x++ {
					d[x-p] = 0
				}
			}
		}
		if rem := nc % nr; rem != 0 {
			clear(row[(nc/nr)*kc*nr+rem:][:nr-rem])
		}
	}
}

// maxTaps bounds kh·kw for im2colPanelSame32 (7×7).
const maxTaps = 49

// im2colPanelSame32 is im2colPanelSame for the AVX-512 kernel's slivers
// of 32 columns: every row of a sliver is one masked run of the input
// plane (simdblas.GatherRows32), the mask clearing the columns whose tap
// falls outside the map, which the Go path zeroes after a copy, value by
// value at the edges of every output row.
func im2colPanelSame32(in fmap, cv *conv, dst []float32, p0, kc, j0, nc int) {
	h, w, khw := in.h, in.w, cv.kh*cv.kw
	var tapOff [maxTaps]int
	var tapMask [maxTaps]uint32
	var rowOK, colOK [maxTaps]uint32
	for t := range khw {
		tapOff[t] = (t/cv.kw-cv.ph)*w + t%cv.kw - cv.pw
	}
	for q0 := 0; q0 < nc; q0 += 32 {
		p, cnt := j0+q0, min(32, nc-q0)
		// Bit q of rowOK[i] (colOK[j]): output pixel p+q's tap row i
		// (column j) lies inside the map.
		for i := range cv.kh {
			var m uint32
			y, x := p/w, p%w
			for q := range cnt {
				if yy := y + i - cv.ph; yy >= 0 && yy < h {
					m |= 1 << q
				}
				if x++; x == w {
					x, y = 0, y+1
				}
			}
			rowOK[i] = m
		}
		for j := range cv.kw {
			var m uint32
			x := p % w
			for q := range cnt {
				if xx := x + j - cv.pw; xx >= 0 && xx < w {
					m |= 1 << q
				}
				if x++; x == w {
					x = 0
				}
			}
			colOK[j] = m
		}
		for t := range khw {
			tapMask[t] = rowOK[t/cv.kw] & colOK[t%cv.kw]
		}
		simdblas.GatherRows32(dst[q0*kc:], kc, in.d, p0/khw*h*w+p, h*w, p0%khw, tapOff[:khw], tapMask[:khw])
	}
}

// maxPool is a 3×3 max pool with the given stride and padding, written
// into channels [c0, c0+in.c) of dst (allocated when nil). Padding never
// wins a maximum, as with PyTorch's implicit −∞ padding. The network's
// two kinds, stride 2 without padding and stride 1 with padding 1, take
// the vector paths of maxPoolStride2 and maxPoolSame.
func maxPool(in fmap, stride, pad int, dst *fmap, c0 int, ar *arena) fmap {
	ho, wo := outSize(in.h, 3, stride, pad), outSize(in.w, 3, stride, pad)
	if dst == nil {
		f := ar.fmap(in.c, ho, wo)
		dst, c0 = &f, 0
	}
	out := dst.d[c0*ho*wo : (c0+in.c)*ho*wo]
	switch {
	case stride == 2 && pad == 0 && in.h >= 3 && in.w >= 3 && in.w < 24:
		maxPoolStride2Small(in, out, ho, wo, ar)
	case stride == 2 && pad == 0 && in.h >= 3 && in.w >= 3:
		maxPoolStride2(in, out, ho, wo, ar)
	case stride == 1 && pad == 1 && in.h >= 2 && in.w >= 2:
		maxPoolSame(in, out, ar)
	default:
		maxPoolAny(in, stride, pad, out, ho, wo, ar)
	}
	return *dst
}

// maxPoolStride2 is the unpadded stride-2 pool: the maximum of three
// columns at stride 2 of every input row, then of three of those rows
// per output row, so that the map is read once.
func maxPoolStride2(in fmap, out []float32, ho, wo int, ar *arena) {
	hr := ar.alloc(in.h * wo)
	for c := 0; c < in.c; c++ {
		plane := in.d[c*in.h*in.w:]
		for y := 0; y < in.h; y++ {
			simdblas.MaxStride2(hr[y*wo:(y+1)*wo], plane[y*in.w:])
		}
		for oy := 0; oy < ho; oy++ {
			r := hr[2*oy*wo:]
			simdblas.Max3(out[(c*ho+oy)*wo:][:wo], r, r[wo:], r[2*wo:])
		}
	}
}

// maxPoolStride2Small is maxPoolStride2 for the 17-wide map of Mixed_7a,
// whose rows of 8 outputs made that one short kernel call per row: the
// maximum of every 3×3 window of the flattened map (wrapping windows
// included) in two vector passes over all channels at once, from which
// the stride-2 windows, all inside their plane, are picked. (On the
// 35-wide map the two passes' 2.8 MB cost more than the calls.)
func maxPoolStride2Small(in fmap, out []float32, ho, wo int, ar *arena) {
	n, w, hw := len(in.d), in.w, in.h*in.w
	hr := ar.alloc(n - 2)
	simdblas.Max3(hr, in.d, in.d[1:], in.d[2:])
	vr := ar.alloc(n - 2 - 2*w)
	simdblas.Max3(vr, hr, hr[w:], hr[2*w:])
	for c := range in.c {
		for oy := range ho {
			src := vr[c*hw+2*oy*w:][:2*wo-1]
			dst := out[(c*ho+oy)*wo:][:wo]
			for ox := range dst {
				dst[ox] = src[2*ox]
			}
		}
	}
}

// maxPoolSame is the stride-1 pool with padding 1 on maps of at least
// 2×2, over the whole map at once: the maximum of each value and its
// left and right neighbours (in the flattened map, so the first and last
// column of every row are redone without the neighbour that belongs to
// the next row), then of each row and the rows above and below (the first
// and last row of every plane redone likewise). Whole maps keep the
// vectors full on the 8×8 maps of the last block.
func maxPoolSame(in fmap, out []float32, ar *arena) {
	h, w, n := in.h, in.w, len(in.d)
	src := in.d
	hr := ar.alloc(n)
	simdblas.Max3(hr[1:n-1], src, src[1:], src[2:])
	for r := 0; r < n; r += w {
		hr[r] = max(src[r], src[r+1])
		hr[r+w-1] = max(src[r+w-2], src[r+w-1])
	}
	if n > 2*w {
		simdblas.Max3(out[w:n-w], hr, hr[w:], hr[2*w:])
	}
	for p := 0; p < n; p += h * w {
		first, last := p, p+(h-1)*w
		for x := range w {
			out[first+x] = max(hr[first+x], hr[first+w+x])
			out[last+x] = max(hr[last-w+x], hr[last+x])
		}
	}
}

// maxPoolAny is the separable pool for any stride and padding: a
// maximum over three columns for every input row, then over three of
// those rows. Windows that lie wholly inside the map take three taps
// without a loop over their bounds.
func maxPoolAny(in fmap, stride, pad int, out []float32, ho, wo int, ar *arena) {
	x0, x1 := windowTaps(wo, in.w, stride, pad)
	y0, y1 := windowTaps(ho, in.h, stride, pad)
	rows := ar.alloc(in.h * wo)
	for c := 0; c < in.c; c++ {
		plane := in.d[c*in.h*in.w : (c+1)*in.h*in.w]
		for y := 0; y < in.h; y++ {
			src, hr := plane[y*in.w:(y+1)*in.w], rows[y*wo:(y+1)*wo]
			for ox := range hr {
				lo, hi := x0[ox], x1[ox]
				if hi-lo == 3 {
					t := src[lo : lo+3 : lo+3]
					hr[ox] = max(t[0], t[1], t[2])
					continue
				}
				m := src[lo]
				for _, v := range src[lo+1 : hi] {
					m = max(m, v)
				}
				hr[ox] = m
			}
		}
		o := out[c*ho*wo : (c+1)*ho*wo]
		for oy := 0; oy < ho; oy++ {
			o := o[oy*wo : (oy+1)*wo]
			r0 := rows[y0[oy]*wo:][:len(o)]
			switch y1[oy] - y0[oy] {
			case 3:
				r1, r2 := rows[(y0[oy]+1)*wo:][:len(o)], rows[(y0[oy]+2)*wo:][:len(o)]
				for ox := range o {
					o[ox] = max(r0[ox], r1[ox], r2[ox])
				}
			case 2:
				r1 := rows[(y0[oy]+1)*wo:][:len(o)]
				for ox := range o {
					o[ox] = max(r0[ox], r1[ox])
				}
			default:
				copy(o, r0)
			}
		}
	}
}

// windowTaps returns, for each of n outputs of a 3-wide window with the
// given stride and padding over an input of size in, the input range
// [lo, hi) that lies inside the input.
func windowTaps(n, in, stride, pad int) (lo, hi []int) {
	lo, hi = make([]int, n), make([]int, n)
	for o := range n {
		lo[o], hi[o] = max(0, o*stride-pad), min(in, o*stride-pad+3)
	}
	return lo, hi
}

// avgPool is pytorch-fid's 3×3, stride 1, padding 1 average pool with
// count_include_pad=False: the divisor is the number of pixels inside the
// map (4 in a corner, 6 on an edge), which is what the TensorFlow graph
// did and torchvision's default (count padding) does not. Separable, as
// maxPoolSame, and summed left to right, top to bottom.
func avgPool(in fmap, ar *arena) fmap {
	out := ar.fmap(in.c, in.h, in.w)
	h, w, n := in.h, in.w, len(in.d)
	x0, x1 := windowTaps(w, w, 1, 1)
	y0, y1 := windowTaps(h, h, 1, 1)
	count := ar.alloc(h * w)
	for y := range h {
		for x := range w {
			count[y*w+x] = float32((y1[y] - y0[y]) * (x1[x] - x0[x]))
		}
	}
	// Horizontal sums over the flattened map, then the first and last
	// column of every row without the neighbour across the row's end.
	src, hr := in.d, ar.alloc(n)
	if n >= 3 {
		simdblas.Sum3(hr[1:n-1], src, src[1:], src[2:])
	}
	for r := 0; r < n; r += w {
		var s float32
		for _, v := range src[r+x0[0] : r+x1[0]] {
			s += v
		}
		hr[r] = s
		if w > 1 {
			s = 0
			for _, v := range src[r+x0[w-1] : r+x1[w-1]] {
				s += v
			}
			hr[r+w-1] = s
		}
	}
	for c := 0; c < in.c; c++ {
		rows, dst := hr[c*h*w:(c+1)*h*w], out.d[c*h*w:(c+1)*h*w]
		if h > 2 {
			simdblas.Sum3Div(dst[w:(h-1)*w], rows, rows[w:], rows[2*w:], count[w:])
		}
		for _, y := range []int{0, h - 1} {
			o := dst[y*w : (y+1)*w]
			cnt := count[y*w:][:len(o)]
			r0 := rows[y0[y]*w:][:len(o)]
			if y1[y]-y0[y] == 2 {
				r1 := rows[(y0[y]+1)*w:][:len(o)]
				for x := range o {
					o[x] = (r0[x] + r1[x]) / cnt[x]
				}
			} else {
				for x := range o {
					o[x] = r0[x] / cnt[x]
				}
			}
		}
	}
	return out
}

// meanPool averages every channel over the map (adaptive average pool to
// 1×1), in float64 so the mean of 5,329 values keeps float32 accuracy.
func meanPool(in fmap) []float32 {
	n := in.h * in.w
	out := make([]float32, in.c)
	for c := range out {
		var s float64
		for _, v := range in.d[c*n : (c+1)*n] {
			s += float64(v)
		}
		out[c] = float32(s / float64(n))
	}
	return out
}

// pointwise runs the 1×1 convolutions of block's pointwiseGroups entry on
// x and returns their outputs in the group's order; with first set, the
// first one's goes into channels [c0, c0+cout) of *first instead (and
// outs[0] is *first). Fused, they are one product into an arena map, the
// first output copied out.
func (m *Model) pointwise(block string, x fmap, first *fmap, c0 int, scratch *[]float32, ar *arena) []fmap {
	var names []string
	for _, g := range pointwiseGroups() {
		if g.block == block {
			names = g.members
		}
	}
	outs := make([]fmap, len(names))
	f := m.fused[block]
	if f == nil {
		for i, name := range names {
			if i == 0 && first != nil {
				outs[0] = m.convs[name].apply(x, first, c0, scratch, ar)
				continue
			}
			outs[i] = m.convs[name].apply(x, nil, 0, scratch, ar)
		}
		return outs
	}
	all := f.apply(x, nil, 0, scratch, ar)
	hw, off := x.h*x.w, 0
	for i, name := range names {
		c := m.convs[name].cout
		outs[i] = fmap{c, x.h, x.w, all.d[off*hw : (off+c)*hw]}
		off += c
	}
	if first != nil {
		copy(first.d[c0*hw:], outs[0].d)
		outs[0] = *first
	}
	return outs
}

// forward runs one preprocessed image through the network's blocks up
// to stage (see Output.stage) and returns their outputs, the later ones
// nil. Stopping early changes nothing in the blocks that run.
func (m *Model) forward(ctx context.Context, img []float32, stage int) (Features, error) {
	var f Features
	x := fmap{3, Size, Size, img}
	ar := getArena()
	scratch := &ar.scratch
	defer putArena(ar)
	var tr layerTracer
	if traceLayers != nil {
		tr = traceLayers()
		defer tr.done()
	}
	// mark ends a step of the pass: the time since the previous mark
	// goes to name (when a benchmark traces the layers).
	mark := func(name string, macs int) {
		if tr != nil {
			tr.layer(name, macs)
		}
	}
	run := func(name string, in fmap) fmap {
		y := m.convs[name].apply(in, nil, 0, scratch, ar)
		mark(name, m.convs[name].macs(in))
		return y
	}
	into := func(name string, in fmap, dst *fmap, c0 int) {
		m.convs[name].apply(in, dst, c0, scratch, ar)
		mark(name, m.convs[name].macs(in))
	}
	// pooledInto runs a pool branch: the average pool, then the named
	// 1×1 convolution.
	pooledInto := func(name string, in fmap, dst *fmap, c0 int) {
		m.convs[name].applyAvgPooled(in, dst, c0, ar)
		mark(name+" (with avg pool)", m.convs[name].macs(in))
	}
	keep := func(block string, x fmap) fmap {
		y := ar.keep(x)
		mark(block+" (keep)", 0)
		return y
	}

	// Block 0: 299 → 149 → 147 → 147 → max pool → 73, 64 channels.
	// The stem's maps (12.5 MB up to the pool) fit in one slab: moving
	// Conv2d_2a's output down over Conv2d_1a's would only copy 2.8 MB.
	x = run("Conv2d_1a_3x3", x)
	x = run("Conv2d_2a_3x3", x)
	x = run("Conv2d_2b_3x3", x)
	x = keep("MaxPool_3a", maxPool(x, 2, 0, nil, 0, ar))
	f.Pool64 = meanPool(x)
	if stage == 0 {
		return f, nil
	}
	// Block 1: 73 → 71 → max pool → 35, 192 channels.
	x = run("Conv2d_3b_1x1", x)
	x = run("Conv2d_4a_3x3", x)
	x = keep("MaxPool_5a", maxPool(x, 2, 0, nil, 0, ar))
	f.Pool192 = meanPool(x)
	if err := ctx.Err(); err != nil || stage == 1 {
		return f, err
	}

	// Block 2: Mixed_5b..5d (FIDInceptionA), 6a (InceptionB), 6b..6e
	// (FIDInceptionC); 35 → 17, 768 channels.
	for _, p := range []struct {
		name string
		pool int
	}{{"Mixed_5b", 32}, {"Mixed_5c", 64}, {"Mixed_5d", 64}} {
		out := ar.fmap(224+p.pool, x.h, x.w)
		pw := m.pointwise(p.name, x, &out, 0, scratch, ar)
		mark(p.name+".pointwise", m.pointwiseMACs(p.name, x))
		into(p.name+".branch5x5_2", pw[1], &out, 64)
		t := run(p.name+".branch3x3dbl_2", pw[2])
		into(p.name+".branch3x3dbl_3", t, &out, 128)
		pooledInto(p.name+".branch_pool", x, &out, 224)
		x = keep(p.name, out)
		if err := ctx.Err(); err != nil {
			return f, err
		}
	}
	{
		ho := outSize(x.h, 3, 2, 0)
		out := ar.fmap(384+96+x.c, ho, ho)
		into("Mixed_6a.branch3x3", x, &out, 0)
		t := run("Mixed_6a.branch3x3dbl_2", run("Mixed_6a.branch3x3dbl_1", x))
		into("Mixed_6a.branch3x3dbl_3", t, &out, 384)
		maxPool(x, 2, 0, &out, 480, ar)
		mark("Mixed_6a.max_pool", 0)
		x = keep("Mixed_6a", out)
	}
	for _, p := range []string{"Mixed_6b", "Mixed_6c", "Mixed_6d", "Mixed_6e"} {
		out := ar.fmap(768, x.h, x.w)
		pw := m.pointwise(p, x, &out, 0, scratch, ar)
		mark(p+".pointwise", m.pointwiseMACs(p, x))
		t := run(p+".branch7x7_2", pw[1])
		into(p+".branch7x7_3", t, &out, 192)
		t = pw[2]
		for _, s := range []string{"_2", "_3", "_4"} {
			t = run(p+".branch7x7dbl"+s, t)
		}
		into(p+".branch7x7dbl_5", t, &out, 384)
		pooledInto(p+".branch_pool", x, &out, 576)
		x = keep(p, out)
		if err := ctx.Err(); err != nil {
			return f, err
		}
	}
	f.Pool768 = meanPool(x)
	if stage == 2 {
		return f, nil
	}

	// Block 3: Mixed_7a (InceptionD), 7b (FIDInceptionE_1), 7c
	// (FIDInceptionE_2, max pool in its pool branch); 17 → 8, 2048
	// channels, then the global average pool.
	{
		ho := outSize(x.h, 3, 2, 0)
		out := ar.fmap(320+192+x.c, ho, ho)
		pw := m.pointwise("Mixed_7a", x, nil, 0, scratch, ar)
		mark("Mixed_7a.pointwise", m.pointwiseMACs("Mixed_7a", x))
		into("Mixed_7a.branch3x3_2", pw[0], &out, 0)
		t := pw[1]
		for _, s := range []string{"_2", "_3"} {
			t = run("Mixed_7a.branch7x7x3"+s, t)
		}
		into("Mixed_7a.branch7x7x3_4", t, &out, 320)
		maxPool(x, 2, 0, &out, 512, ar)
		mark("Mixed_7a.max_pool", 0)
		x = keep("Mixed_7a", out)
	}
	for _, p := range []string{"Mixed_7b", "Mixed_7c"} {
		out := ar.fmap(2048, x.h, x.w)
		pw := m.pointwise(p, x, &out, 0, scratch, ar)
		mark(p+".pointwise", m.pointwiseMACs(p, x))
		t := pw[1]
		into(p+".branch3x3_2a", t, &out, 320)
		into(p+".branch3x3_2b", t, &out, 704)
		t = run(p+".branch3x3dbl_2", pw[2])
		into(p+".branch3x3dbl_3a", t, &out, 1088)
		into(p+".branch3x3dbl_3b", t, &out, 1472)
		if p == "Mixed_7b" {
			pooledInto(p+".branch_pool", x, &out, 1856)
		} else {
			pooled := maxPool(x, 1, 1, nil, 0, ar)
			mark(p+".max_pool", 0)
			into(p+".branch_pool", pooled, &out, 1856)
		}
		x = keep(p, out)
		if err := ctx.Err(); err != nil {
			return f, err
		}
	}
	f.Pool2048 = meanPool(x)
	mark("mean pools", 0)

	if m.fcPacked == nil && stage >= stageFC {
		// fc: logits_unbiased = W·p, logits = W·p + b. (With the packed
		// weights Forward applies it to the whole batch.)
		f.LogitsUnbiased = make([]float32, Classes)
		linalg.Sgemm(false, false, Classes, 1, 2048, 1, m.fcW, 2048, f.Pool2048, 1, 0, f.LogitsUnbiased, 1)
		m.fcBias(&f)
	}
	return f, nil
}

// fcBias sets f.Logits to f.LogitsUnbiased plus the fc bias.
func (m *Model) fcBias(f *Features) {
	f.Logits = make([]float32, Classes)
	for i, v := range f.LogitsUnbiased {
		f.Logits[i] = v + m.fcB[i]
	}
}

// fcBatch applies the fc layer to every image of a batch in one product
// with the packed weights: Classes × 2048 times 2048 × len(fs). Each
// logit is summed in the order of the one-image product.
func (m *Model) fcBatch(fs []Features) {
	n := len(fs)
	if n == 0 {
		return
	}
	p := make([]float32, 2048*n)
	for j, f := range fs {
		for i, v := range f.Pool2048 {
			p[i*n+j] = v
		}
	}
	c := make([]float32, Classes*n)
	simdblas.MulAddPacked(m.fcPacked, n, p, n, c, n)
	for j := range fs {
		f := &fs[j]
		f.LogitsUnbiased = make([]float32, Classes)
		for i := range f.LogitsUnbiased {
			f.LogitsUnbiased[i] = c[i*n+j]
		}
		m.fcBias(f)
	}
}

// layerTracer is told the end of every step of one image's forward pass
// on the goroutine that runs it: the step's name and its multiply-adds
// (0 for copies and pools). A benchmark uses it to time the layers of
// the real pass; forward makes no call when traceLayers is nil.
type layerTracer interface {
	layer(name string, macs int)
	done()
}

// traceLayers, when set, starts the tracer of one image's pass.
var traceLayers func() layerTracer

// macs is the multiply-adds of cv on a map of in's size.
func (cv *conv) macs(in fmap) int {
	ho, wo := outSize(in.h, cv.kh, cv.stride, cv.ph), outSize(in.w, cv.kw, cv.stride, cv.pw)
	return cv.cout * cv.cin * cv.kh * cv.kw * ho * wo
}

// pointwiseMACs is the multiply-adds of block's 1×1 convolutions on x.
func (m *Model) pointwiseMACs(block string, x fmap) int {
	n := 0
	for _, g := range pointwiseGroups() {
		if g.block == block {
			for _, name := range g.members {
				n += m.convs[name].macs(x)
			}
		}
	}
	return n
}
