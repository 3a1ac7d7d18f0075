package simdblas

// The transforms of Lavin and Gray's F(4×4, 3×3) minimal filtering
// ("Fast Algorithms for Convolutional Neural Networks", CVPR 2016), for
// a 3×3 stride-1 convolution done as 36 GEMMs: every 4×4 block of output
// pixels comes from a 6×6 input patch d as Aᵀ[(G g Gᵀ) ⊙ (Bᵀ d B)]A, 36
// multiplications per channel pair and block where F(2×2, 3×3) needs 64
// and a direct convolution 144. The interpolation points are 0, ±1, ±2
// and ∞, so that every coefficient of Bᵀ and Aᵀ is a small integer.
//
// Both transforms work on 16 tiles at a time and do the vertical pass
// before the horizontal one; the Go loops and the AVX-512 kernels do the
// same operations in the same order and give the same bits.
//
//	Bᵀ = | 4  0 −5  0  1  0 |     Aᵀ = | 1  1  1  1  1  0 |
//	     | 0 −4 −4  1  1  0 |          | 0  1 −1  2 −2  0 |
//	     | 0  4 −4 −1  1  0 |          | 0  1  1  4  4  0 |
//	     | 0 −2 −1  2  1  0 |          | 0  1 −1  8 −8  1 |
//	     | 0  2 −1 −2  1  0 |
//	     | 0  4  0 −5  0  1 |

// winograd4AVX512 selects the AVX-512 transforms; the tests clear it to
// run the Go ones.
var winograd4AVX512 = hasAVX512

// Winograd4Input writes Bᵀ d B for n tiles of one row of tiles: tile t's
// patch d is columns 4t..4t+5 of the six rows src[i·lds:] (i < 6), and
// element e = 6i+j of its transform goes to dst[e·ldd + t].
//
// With g = ⌈n/16⌉, it reads columns up to 64g+15 of each row (so lds
// must be at least 64g+16 and src that long past its sixth row's start)
// and writes 16g values per element (dst[e·ldd + t] for t < 16g): the
// ones past n are garbage for the caller to overwrite or ignore.
func Winograd4Input(src []float32, lds, n int, dst []float32, ldd int) {
	if n <= 0 {
		return
	}
	g := (n + 15) / 16
	if lds < 64*g+16 || ldd < 16*g {
		panic("simdblas: Winograd4Input strides too short")
	}
	_ = src[5*lds+64*g+15]
	_ = dst[35*ldd+16*g-1]
	if winograd4AVX512 {
		winograd4InputAVX512(&src[0], lds, g, &dst[0], ldd)
		return
	}
	for t := range 16 * g {
		// w[k] is the vertical transform of column 4t+k.
		var w [6][6]float32
		for k := range 6 {
			var d [6]float32
			for i := range d {
				d[i] = src[i*lds+4*t+k]
			}
			w[k] = wino4In(d)
		}
		for a := range 6 {
			var r [6]float32
			for k := range r {
				r[k] = w[k][a]
			}
			o := wino4In(r)
			for b, v := range o {
				dst[(6*a+b)*ldd+t] = v
			}
		}
	}
}

// wino4In is Bᵀd for one column d, in the kernel's order of operations;
// the products by 5 are rounded before they are added so that the
// compiler cannot fuse them.
func wino4In(d [6]float32) [6]float32 {
	var o [6]float32
	o[0] = (d[4] - float32(5*d[2])) + 4*d[0]
	o[1] = (d[3] + d[4]) - 4*(d[1]+d[2])
	o[2] = (d[4] - d[3]) + 4*(d[1]-d[2])
	t1, t2 := d[4]-d[2], 2*(d[3]-d[1])
	o[3] = t1 + t2
	o[4] = t1 - t2
	o[5] = (d[5] - float32(5*d[3])) + 4*d[1]
	return o
}

// Winograd4Output writes max(Aᵀ M A + bias, 0) for n tiles: element e
// of tile t's product M is m[e·ldm + t], and its 4×4 block goes to
// columns 4t..4t+3 of the rows dst[i·ldd:] (i < 4). NaN stays NaN.
//
// With g = ⌈n/16⌉, it reads m[e·ldm + t] for t < 16g and writes 64g
// values of each row (ldd >= 64g).
func Winograd4Output(m []float32, ldm, n int, bias float32, dst []float32, ldd int) {
	if n <= 0 {
		return
	}
	g := (n + 15) / 16
	if ldm < 16*g || ldd < 64*g {
		panic("simdblas: Winograd4Output strides too short")
	}
	_ = m[35*ldm+16*g-1]
	_ = dst[3*ldd+64*g-1]
	if winograd4AVX512 {
		winograd4OutputAVX512(&m[0], ldm, g, bias, &dst[0], ldd)
		return
	}
	for t := range 16 * g {
		// v[j] is the vertical transform of column j of M.
		var v [6][4]float32
		for j := range 6 {
			var s [6]float32
			for a := range s {
				s[a] = m[(6*a+j)*ldm+t]
			}
			v[j] = wino4Out(s)
		}
		for p := range 4 {
			var s [6]float32
			for j := range s {
				s[j] = v[j][p]
			}
			y := wino4Out(s)
			for q, x := range y {
				dst[p*ldd+4*t+q] = relu(x + bias)
			}
		}
	}
}

// wino4Out is Aᵀs for one column s, in the kernel's order of
// operations (every product is by a power of two, so exact).
func wino4Out(s [6]float32) [4]float32 {
	a, b := s[1]+s[2], s[1]-s[2]
	c, d := s[3]+s[4], s[3]-s[4]
	return [4]float32{(s[0] + a) + c, b + 2*d, a + 4*c, (b + 8*d) + s[5]}
}

// relu is max(x, 0) with NaN kept, as the kernels do.
func relu(x float32) float32 {
	if x < 0 {
		return 0
	}
	return x
}
