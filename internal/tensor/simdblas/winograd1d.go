package simdblas

// The transforms of one-dimensional minimal filtering F(m, r) (Lavin and
// Gray, "Fast Algorithms for Convolutional Neural Networks", CVPR 2016),
// for the 1×r and r×1 convolutions done as a = m+r−1 GEMMs: m outputs of
// an r-tap filter come from a inputs d as Aᵀ[(G g) ⊙ (Bᵀ d)], a
// multiplications per channel pair and tile instead of m·r. The caller
// chooses the interpolation points and passes Bᵀ and Aᵀ, whose entries
// must be exact in float32 so that the only rounding is the arithmetic.
//
// The points are symmetric: 0, ±p_1, …, ±p_q and ∞ in that order
// (a = 2q+2), so that Bᵀ's row for −p is its row for p with the odd
// columns negated, row 0 has only even columns and row ∞ only odd ones,
// and Aᵀ's column for −p is its column for p with the odd rows negated:
// the transforms compute the even and odd halves once for both points
// of a pair, about half the products of the plain matrix products.
//
// Both transforms work on 16 tiles at a time, every tile's inputs or
// outputs at an offset of its own (so that tiles may run along a row or
// down a column of a map and wrap to the next one): the AVX-512 kernels
// gather and scatter them. Every element is a sum of products in order,
// each product rounded before it is added (no fused multiply-add), in Go
// and in the kernels alike, which give the same bits.

// MaxWinograd1DPoints bounds a, the points of a one-dimensional form
// (the registers of the AVX-512 kernels).
const MaxWinograd1DPoints = 12

// winograd1dAVX512 selects the AVX-512 transforms; the tests clear it to
// run the Go ones.
var winograd1dAVX512 = hasAVX512

// Winograd1DInput writes the transforms Bᵀd of n tiles: tile j's inputs
// are d[k] = src[off[j] + k·step] (k < a), and element e of its
// transform, Σ_k bt[e·a+k]·d[k], goes to dst[e·ldd + j]. Of bt it reads
// row 0's even columns, the rows of the points p (odd rows but the last)
// but for their last column, and the last row's odd columns; the others
// are taken to have the symmetric form.
//
// With g = ⌈n/16⌉ it reads all 16g offsets of off (the ones past n must
// still point inside src) and writes 16g values per element (ldd >= 16g):
// the ones past n are garbage for the caller to ignore.
func Winograd1DInput(bt []float32, a int, src []float32, off []int32, step, n int, dst []float32, ldd int) {
	if n <= 0 {
		return
	}
	g := (n + 15) / 16
	if a < 4 || a%2 != 0 || a > MaxWinograd1DPoints || len(bt) < a*a || len(off) < 16*g || ldd < 16*g || step <= 0 {
		panic("simdblas: Winograd1DInput shape out of range")
	}
	_ = dst[(a-1)*ldd+16*g-1]
	last := (a - 1) * step
	for _, o := range off[:16*g] {
		if o < 0 || int(o)+last >= len(src) {
			panic("simdblas: Winograd1DInput offset outside src")
		}
	}
	if winograd1dAVX512 {
		winograd1dInputAVX512(&bt[0], a, &src[0], &off[0], step, g, &dst[0], ldd)
		return
	}
	var d [MaxWinograd1DPoints]float32
	for j := range 16 * g {
		for k := range a {
			d[k] = src[int(off[j])+k*step]
		}
		dst[j] = sum1d(bt, d[:a], 0, a-1)
		for e := 1; e < a-1; e += 2 {
			row := bt[e*a : e*a+a]
			even, odd := sum1d(row, d[:a], 0, a-1), sum1d(row, d[:a], 1, a-2)
			dst[e*ldd+j], dst[(e+1)*ldd+j] = even+odd, even-odd
		}
		dst[(a-1)*ldd+j] = sum1d(bt[(a-1)*a:a*a], d[:a], 1, a)
	}
}

// sum1d is Σ row[k]·d[k] over k = k0, k0+2, … below k1, in order, each
// product rounded before it is added.
func sum1d(row, d []float32, k0, k1 int) float32 {
	s := float32(row[k0] * d[k0])
	for k := k0 + 2; k < k1; k += 2 {
		s += float32(row[k] * d[k])
	}
	return s
}

// Winograd1DOutput writes max(Aᵀs + bias, 0) for n tiles, s being
// the tile's products: element e of tile j's is m[e·ldm + j], and its
// output i (i < mo, mo outputs a tile) goes to dst[off[j] + i·step].
// The outputs of distinct tiles must not overlap. NaN stays NaN. Of at
// it reads the columns of 0 (in even rows) and of the points p (odd
// columns but the last), and the last column in the last row; the
// others are taken to have the symmetric form (Aᵀ's column of 0 is
// zero in the odd rows, its column of ∞ zero but in the last row).
//
// With g = ⌈n/16⌉ it reads m[e·ldm + j] for j < 16g (ldm >= 16g).
func Winograd1DOutput(at []float32, a, mo int, m []float32, ldm int, off []int32, step, n int, bias float32, dst []float32) {
	if n <= 0 {
		return
	}
	g := (n + 15) / 16
	if a < 4 || a%2 != 0 || a > MaxWinograd1DPoints || mo < 2 || mo > a || len(at) < mo*a || len(off) < n || ldm < 16*g || step <= 0 {
		panic("simdblas: Winograd1DOutput shape out of range")
	}
	_ = m[(a-1)*ldm+16*g-1]
	last := (mo - 1) * step
	for _, o := range off[:n] {
		if o < 0 || int(o)+last >= len(dst) {
			panic("simdblas: Winograd1DOutput offset outside dst")
		}
	}
	if winograd1dAVX512 {
		winograd1dOutputAVX512(&at[0], a, mo, &m[0], ldm, &off[0], step, n, bias, &dst[0])
		return
	}
	var s, uv [MaxWinograd1DPoints]float32
	for j := range n {
		for e := range a {
			s[e] = m[e*ldm+j]
		}
		// uv holds s₀, then for each pair of points ±p the sum
		// u = s₊ + s₋ and the difference v = s₊ − s₋.
		uv[0] = s[0]
		for e := 1; e < a-1; e += 2 {
			uv[e], uv[e+1] = s[e]+s[e+1], s[e]-s[e+1]
		}
		for i := range mo {
			row := at[i*a : i*a+a]
			var y float32
			if i%2 == 0 {
				y = float32(row[0] * uv[0])
				for e := 1; e < a-1; e += 2 {
					y += float32(row[e] * uv[e])
				}
			} else {
				y = float32(row[1] * uv[2])
				for e := 3; e < a-1; e += 2 {
					y += float32(row[e] * uv[e+1])
				}
			}
			if i == mo-1 {
				y += float32(row[a-1] * s[a-1])
			}
			if y += bias; y < 0 {
				y = 0 // max(y, 0) with NaN kept, as the kernel's VMAXPS
			}
			dst[int(off[j])+i*step] = y
		}
	}
}
