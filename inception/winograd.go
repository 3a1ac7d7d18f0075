package inception

import "github.com/genlens/genlens/internal/simdblas"

// winograd is a 3×3, stride-1 convolution in Lavin and Gray's minimal
// filtering form F(2×2, 3×3) ("Fast Algorithms for Convolutional Neural
// Networks", CVPR 2016): every 2×2 block of output pixels comes from a
// 4×4 patch of the input as Aᵀ[(G g Gᵀ) ⊙ (Bᵀ d B)]A, so the 36
// multiplications per channel pair and block of a direct convolution
// become 16, done as 16 GEMMs (one per element of the 4×4 transformed
// tile) of the transformed weights, cout × cin, times the transformed
// patches, cin × blocks. The transforms use only ±1, ±½ and sums, which
// keeps the features within 1e-6 of the direct convolution on the
// fixture network.
type winograd struct {
	// tile is the side of the output blocks: 2 for F(2×2, 3×3), 4 for
	// F(4×4, 3×3) (see winograd4).
	tile int
	u    []*simdblas.Packed // G g Gᵀ, element e of every (cout, cin) pair
	zero []float32          // cout zeros: the products start from them
}

// winogradMaxWeights bounds cout·cin for the layers that take the
// Winograd form: the large 3×3 convolutions of Mixed_7b/7c (448 → 384
// channels) run on 8×8 maps, where 16 blocks make GEMMs too narrow to
// pay for the transforms, and their im2col product is already efficient.
const winogradMaxWeights = 192 * 192

// useWinograd reports whether a convolution of this shape takes the
// Winograd form (with the packed kernels of the pure-Go build only).
func useWinograd(s convSpec) bool {
	return s.kh == 3 && s.kw == 3 && s.stride == 1 && s.padH == s.padW && s.cin*s.cout <= winogradMaxWeights
}

// newWinograd transforms the folded weights w (cout × cin × 3 × 3) in
// float64, rounding each transformed weight once.
func newWinograd(cout, cin int, w []float32) *winograd {
	u := make([][]float32, 16)
	for e := range u {
		u[e] = make([]float32, cout*cin)
	}
	for o := 0; o < cout; o++ {
		for c := 0; c < cin; c++ {
			g := w[(o*cin+c)*9 : (o*cin+c)*9+9]
			// t = G g (4×3), then t Gᵀ (4×4); G's rows are (1,0,0),
			// (½,½,½), (½,−½,½), (0,0,1).
			var t [4][3]float64
			for j := 0; j < 3; j++ {
				g0, g1, g2 := float64(g[j]), float64(g[3+j]), float64(g[6+j])
				t[0][j] = g0
				t[1][j] = (g0 + g1 + g2) / 2
				t[2][j] = (g0 - g1 + g2) / 2
				t[3][j] = g2
			}
			for i := 0; i < 4; i++ {
				r := [4]float64{t[i][0], (t[i][0] + t[i][1] + t[i][2]) / 2, (t[i][0] - t[i][1] + t[i][2]) / 2, t[i][2]}
				for j := 0; j < 4; j++ {
					u[i*4+j][o*cin+c] = float32(r[j])
				}
			}
		}
	}
	return packWinograd(2, cout, cin, u)
}

// packWinograd packs the transformed weights u[e] (cout × cin each).
func packWinograd(tile, cout, cin int, u [][]float32) *winograd {
	wg := &winograd{tile: tile, u: make([]*simdblas.Packed, len(u)), zero: make([]float32, cout)}
	for e := range u {
		wg.u[e] = simdblas.Pack(cout, cin, u[e], cin)
	}
	return wg
}

// winogradBuf bounds the transformed patches and products of one band
// of block rows, in values (2 MB), so that they stay in L2 between the
// transforms and the GEMMs.
var winogradBuf = 1 << 19

// applyWinograd computes out = ReLU(conv(in) + b) for cv (3×3, stride
// 1, padding ph = pw), out being cout planes of ho×wo. It works on
// bands of rows of 2×2 output blocks: the transformed patches of a band
// (16 matrices cin × blocks), the 16 products, then the output blocks.
func (cv *conv) applyWinograd(in fmap, out []float32, ho, wo int, scratch *[]float32) {
	if cv.wg.tile == 4 {
		cv.applyWinograd4(in, out, ho, wo, scratch)
		return
	}
	pad := cv.ph
	th, tw := (ho+1)/2, (wo+1)/2
	g := (tw + 15) / 16 // groups of 16 blocks in a row
	rb := max(1, (winogradBuf/(16*(cv.cin+cv.cout))-16*g)/tw)
	rb = min(rb, th)
	// Rows of a matrix hold rb·tw blocks and the overrun of the last
	// group of 16; padded input rows hold 32g+2 columns.
	ldv, lds := rb*tw+16*g, 32*g+2
	nv, nm, np := 16*cv.cin*ldv, 16*cv.cout*ldv, (2*rb+2)*lds
	size := nv + nm + np + 2*32*g
	if cap(*scratch) < size {
		*scratch = make([]float32, size)
	}
	buf := (*scratch)[:size]
	v, m, prow, tmp := buf[:nv], buf[nv:nv+nm], buf[nv+nm:nv+nm+np], buf[nv+nm+np:]
	for r0 := 0; r0 < th; r0 += rb {
		r1 := min(th, r0+rb)
		n := (r1 - r0) * tw
		// Transform the patches, channel by channel: the input rows
		// the band covers, zero-padded, then a row of blocks at a time.
		for c := 0; c < in.c; c++ {
			plane := in.d[c*in.h*in.w : (c+1)*in.h*in.w]
			y0 := 2*r0 - pad
			for i := 0; i < 2*(r1-r0)+2; i++ {
				row := prow[i*lds : (i+1)*lds]
				y := y0 + i
				if y < 0 || y >= in.h {
					clear(row)
					continue
				}
				clear(row[:pad])
				k := copy(row[pad:], plane[y*in.w:(y+1)*in.w])
				clear(row[pad+k:])
			}
			for r := r0; r < r1; r++ {
				simdblas.WinogradInput(prow[2*(r-r0)*lds:], lds, tw, v[c*ldv+(r-r0)*tw:], cv.cin*ldv)
			}
		}
		for e := 0; e < 16; e++ {
			simdblas.MulPackedBias(cv.wg.u[e], n, v[e*cv.cin*ldv:], ldv, cv.wg.zero, m[e*cv.cout*ldv:], ldv, false)
		}
		for o := 0; o < cv.cout; o++ {
			plane := out[o*ho*wo : (o+1)*ho*wo]
			for r := r0; r < r1; r++ {
				simdblas.WinogradOutput(m[o*ldv+(r-r0)*tw:], cv.cout*ldv, tw, cv.b[o], tmp, 32*g)
				copy(plane[2*r*wo:(2*r+1)*wo], tmp[:wo])
				if 2*r+1 < ho {
					copy(plane[(2*r+1)*wo:(2*r+2)*wo], tmp[32*g:32*g+wo])
				}
			}
		}
	}
}
