package inception

import "github.com/genlens/genlens/internal/tensor/simdblas"

// winograd is a 3×3, stride-1 convolution in Lavin and Gray's minimal
// filtering form F(4×4, 3×3) ("Fast Algorithms for Convolutional Neural
// Networks", CVPR 2016; see winograd4.go): the transformed weights
// G g Gᵀ, one packed cout × cin matrix per element of the 6×6 tile.
type winograd struct {
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

// packWinograd packs the transformed weights u[e] (cout × cin each).
func packWinograd(cout, cin int, u [][]float32) *winograd {
	wg := &winograd{u: make([]*simdblas.Packed, len(u)), zero: make([]float32, cout)}
	for e := range u {
		wg.u[e] = simdblas.Pack(cout, cin, u[e], cin)
	}
	return wg
}
