package simdblas

// The transforms of Lavin and Gray's F(2×2, 3×3) minimal filtering
// ("Fast Algorithms for Convolutional Neural Networks", CVPR 2016), for
// a 3×3 stride-1 convolution done as 16 GEMMs: per row of 2×2 output
// blocks, Bᵀ d B of every 4×4 input patch d before the products and
// Aᵀ M A of every 4×4 product M after them. Both work on 16 blocks at a
// time, so they read and write in whole groups of 16 (see the slice
// lengths each asks for).

// winogradAVX512 selects the AVX-512 transforms; the tests clear it to
// run the Go ones.
var winogradAVX512 = hasAVX512

// WinogradInput writes Bᵀ d B for n tiles of one row of tiles: tile t's
// patch d is columns 2t..2t+3 of the four rows src[i·lds:] (i < 4), and
// element e = 4i+j of its transform goes to dst[e·ldd + t]. Bᵀ's rows are
// (1,0,−1,0), (0,1,1,0), (0,−1,1,0), (0,1,0,−1).
//
// With g = ⌈n/16⌉, it reads columns up to 32g+1 of each row (so lds must
// be at least 32g+2 and src that long past its fourth row's start) and
// writes 16g values per element (dst[e·ldd + t] for t < 16g): the ones
// past n are garbage for the caller to overwrite or ignore.
func WinogradInput(src []float32, lds, n int, dst []float32, ldd int) {
	g := (n + 15) / 16
	if n <= 0 {
		return
	}
	_ = src[3*lds+32*g+1]
	_ = dst[15*ldd+16*g-1]
	if lds < 32*g+2 || ldd < 16*g {
		panic("simdblas: WinogradInput strides too short")
	}
	if winogradAVX512 {
		winogradInputAVX512(&src[0], lds, g, &dst[0], ldd)
		return
	}
	for t := range 16 * g {
		var d, r [4][4]float32
		for i := range 4 {
			copy(d[i][:], src[i*lds+2*t:][:4])
		}
		for j := range 4 {
			r[0][j] = d[0][j] - d[2][j]
			r[1][j] = d[1][j] + d[2][j]
			r[2][j] = d[2][j] - d[1][j]
			r[3][j] = d[1][j] - d[3][j]
		}
		for i := range 4 {
			q := dst[i*4*ldd+t:]
			q[0] = r[i][0] - r[i][2]
			q[ldd] = r[i][1] + r[i][2]
			q[2*ldd] = r[i][2] - r[i][1]
			q[3*ldd] = r[i][1] - r[i][3]
		}
	}
}

// WinogradOutput writes max(Aᵀ M A + bias, 0) for n tiles: element e of
// tile t's product M is m[e·ldm + t], and its 2×2 block goes to columns
// 2t, 2t+1 of the rows dst[0:] and dst[ldd:]. Aᵀ's rows are (1,1,1,0)
// and (0,1,−1,−1). NaN stays NaN.
//
// With g = ⌈n/16⌉, it reads m[e·ldm + t] for t < 16g and writes 32g
// values of each row (ldd >= 32g).
func WinogradOutput(m []float32, ldm, n int, bias float32, dst []float32, ldd int) {
	g := (n + 15) / 16
	if n <= 0 {
		return
	}
	_ = m[15*ldm+16*g-1]
	_ = dst[ldd+32*g-1]
	if ldm < 16*g || ldd < 32*g {
		panic("simdblas: WinogradOutput strides too short")
	}
	if winogradAVX512 {
		winogradOutputAVX512(&m[0], ldm, g, bias, &dst[0], ldd)
		return
	}
	for t := range 16 * g {
		var s [4][4]float32
		for e := range 16 {
			s[e/4][e%4] = m[e*ldm+t]
		}
		var r [2][4]float32
		for j := range 4 {
			r[0][j] = s[0][j] + s[1][j] + s[2][j]
			r[1][j] = s[1][j] - s[2][j] - s[3][j]
		}
		for i := range 2 {
			dst[i*ldd+2*t] = relu(r[i][0] + r[i][1] + r[i][2] + bias)
			dst[i*ldd+2*t+1] = relu(r[i][1] - r[i][2] - r[i][3] + bias)
		}
	}
}

// relu is max(x, 0) with NaN kept, as the kernels do.
func relu(x float32) float32 {
	if x < 0 {
		return 0
	}
	return x
}
