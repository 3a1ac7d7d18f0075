package inception

import "github.com/genlens/genlens/internal/tensor/simdblas"

// The F(4×4, 3×3) form of a 3×3 stride-1 convolution (Lavin and Gray,
// CVPR 2016): every 4×4 block of output pixels from a 6×6 input patch,
// 36 GEMMs of the transformed weights (cout × cin) times the transformed
// patches (cin × blocks). It does 36 multiplications per channel pair
// and block of 16 pixels where F(2×2, 3×3) does 64, at the cost of
// transforms with larger coefficients (up to 8 and 1/24), which still
// keep the features within 1e-6 of the reference network.

// newWinograd4 transforms the folded weights w (cout × cin × 3 × 3) in
// float64 into G g Gᵀ (6×6), rounding each transformed weight once. G's
// rows are (¼, 0, 0), (−⅙, −⅙, −⅙), (−⅙, ⅙, −⅙), (1/24, 1/12, ⅙),
// (1/24, −1/12, ⅙), (0, 0, 1).
func newWinograd4(cout, cin int, w []float32) *winograd {
	G := [6][3]float64{
		{1.0 / 4, 0, 0},
		{-1.0 / 6, -1.0 / 6, -1.0 / 6},
		{-1.0 / 6, 1.0 / 6, -1.0 / 6},
		{1.0 / 24, 1.0 / 12, 1.0 / 6},
		{1.0 / 24, -1.0 / 12, 1.0 / 6},
		{0, 0, 1},
	}
	u := make([][]float32, 36)
	for e := range u {
		u[e] = make([]float32, cout*cin)
	}
	for o := 0; o < cout; o++ {
		for c := 0; c < cin; c++ {
			g := w[(o*cin+c)*9 : (o*cin+c)*9+9]
			var t [6][3]float64 // G g
			for i := range 6 {
				for j := range 3 {
					for k := range 3 {
						t[i][j] += G[i][k] * float64(g[3*k+j])
					}
				}
			}
			for i := range 6 {
				for j := range 6 {
					var v float64
					for k := range 3 {
						v += t[i][k] * G[j][k]
					}
					u[6*i+j][o*cin+c] = float32(v)
				}
			}
		}
	}
	return packWinograd(cout, cin, u)
}

// winograd4Buf bounds the transformed patches and products of one band
// of block rows, in values (4 MB): the products of the stem and of
// Mixed_5 want a hundred blocks or more a band (measured: 2 MB bands made
// Conv2d_4a 60% slower, its bands one row of 18 blocks; 8 MB bands were
// no faster than 4 MB).
const winograd4Buf = 1 << 20

// applyWinograd computes out = ReLU(conv(in) + b) for cv (3×3, stride
// 1, padding ph = pw), out being cout planes of ho×wo. It works on bands
// of rows of 4×4 output blocks: the transformed patches of a band (36
// matrices cin × blocks), the 36 products, then the output blocks.
func (cv *conv) applyWinograd(in fmap, out []float32, ho, wo int, scratch *[]float32) {
	pad := cv.ph
	th, tw := (ho+3)/4, (wo+3)/4
	g := (tw + 15) / 16 // groups of 16 blocks in a row
	rb := max(1, (winograd4Buf/(36*(cv.cin+cv.cout))-16*g)/tw)
	rb = min(rb, th)
	// Rows of a matrix hold rb·tw blocks and the overrun of the last
	// group of 16; padded input rows hold the 64g+16 columns the input
	// transform reads.
	ldv, lds := rb*tw+16*g, 64*g+16
	nv, nm, np := 36*cv.cin*ldv, 36*cv.cout*ldv, (4*rb+2)*lds
	size := nv + nm + np + 4*64*g
	if cap(*scratch) < size {
		*scratch = make([]float32, size)
	}
	buf := (*scratch)[:size]
	v, m, prow, tmp := buf[:nv], buf[nv:nv+nm], buf[nv+nm:nv+nm+np], buf[nv+nm+np:]
	for r0 := 0; r0 < th; r0 += rb {
		r1 := min(th, r0+rb)
		n := (r1 - r0) * tw
		// The padded rows: every channel writes the same columns of the
		// same rows, so the zeros around them (the padding, and the
		// columns past it that only the discarded outputs read, which
		// must still be finite) are written once a band.
		y0, nrows := 4*r0-pad, 4*(r1-r0)+2
		clear(prow[:nrows*lds])
		for c := 0; c < in.c; c++ {
			plane := in.d[c*in.h*in.w : (c+1)*in.h*in.w]
			for i := max(0, -y0); i < nrows && y0+i < in.h; i++ {
				y := y0 + i
				copy(prow[i*lds+pad:], plane[y*in.w:(y+1)*in.w])
			}
			for r := r0; r < r1; r++ {
				simdblas.Winograd4Input(prow[4*(r-r0)*lds:], lds, tw, v[c*ldv+(r-r0)*tw:], cv.cin*ldv)
			}
		}
		for e := 0; e < 36; e++ {
			simdblas.MulPackedBias(cv.wg.u[e], n, v[e*cv.cin*ldv:], ldv, cv.wg.zero, m[e*cv.cout*ldv:], ldv, false)
		}
		// The output blocks go straight to their rows, but for the last
		// group of 16 of a row and a last block row cut short by ho,
		// whose 64 columns a group writes would run past the plane's
		// rows: those go through tmp.
		for o := 0; o < cv.cout; o++ {
			plane := out[o*ho*wo : (o+1)*ho*wo]
			for r := r0; r < r1; r++ {
				mo := m[o*ldv+(r-r0)*tw:]
				t0 := 0
				if 4*r+4 <= ho {
					t0 = 16 * (g - 1)
					simdblas.Winograd4Output(mo, cv.cout*ldv, t0, cv.b[o], plane[4*r*wo:], wo)
				}
				simdblas.Winograd4Output(mo[t0:], cv.cout*ldv, tw-t0, cv.b[o], tmp, 64*g)
				for i := 0; i < 4 && 4*r+i < ho; i++ {
					copy(plane[(4*r+i)*wo+4*t0:(4*r+i+1)*wo], tmp[i*64*g:])
				}
			}
		}
	}
}
