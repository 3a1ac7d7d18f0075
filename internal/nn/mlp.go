package nn

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	_ "github.com/genlens/genlens/internal/tensor/linalg" // -tags openblas routes blas64 to OpenBLAS
)

// MLP is a fully connected feed-forward network: Linear layers with a ReLU
// after every layer but the last.
//
// All weights and biases live in one slice, layer by layer: the weight
// matrix W_l (Sizes[l+1] rows x Sizes[l] columns, row-major, as PyTorch's
// Linear.weight) followed by the bias b_l. One flat slice lets the
// optimiser update every parameter in a single loop and makes the network
// trivially serialisable.
type MLP struct {
	// Sizes are the layer widths: Sizes[0] inputs, hidden widths, and
	// Sizes[len(Sizes)-1] outputs.
	Sizes []int `json:"sizes"`
	// Params holds W_1, b_1, W_2, b_2, ... as described above.
	Params []float64 `json:"params"`
}

// DefaultHidden is the paper's architecture: three Linear layers with 64
// hidden units each side of the middle one (inputs -> 64 -> 64 -> outputs).
var DefaultHidden = []int{64, 64}

// New returns a network with the given layer widths, initialised as
// PyTorch initialises nn.Linear: every weight and bias of a layer with
// fan_in inputs is drawn from U(-1/sqrt(fan_in), 1/sqrt(fan_in)).
// (PyTorch's kaiming_uniform_ with a = sqrt(5) reduces to this bound.)
func New(sizes []int, rng *rand.Rand) (*MLP, error) {
	if len(sizes) < 2 {
		return nil, fmt.Errorf("nn: need at least an input and an output width, got sizes %v", sizes)
	}
	n := 0
	for l, s := range sizes {
		if s < 1 {
			return nil, fmt.Errorf("nn: layer %d has width %d", l, s)
		}
		if l > 0 {
			n += sizes[l]*sizes[l-1] + sizes[l]
		}
	}
	m := &MLP{Sizes: append([]int(nil), sizes...), Params: make([]float64, n)}
	for l := 0; l < m.Layers(); l++ {
		w, b := m.Layer(l)
		bound := 1 / math.Sqrt(float64(sizes[l]))
		for i := range w.Data {
			w.Data[i] = bound * (2*rng.Float64() - 1)
		}
		for i := range b {
			b[i] = bound * (2*rng.Float64() - 1)
		}
	}
	return m, nil
}

// Layers returns the number of Linear layers.
func (m *MLP) Layers() int { return len(m.Sizes) - 1 }

// Inputs returns the input width.
func (m *MLP) Inputs() int { return m.Sizes[0] }

// Outputs returns the output width.
func (m *MLP) Outputs() int { return m.Sizes[len(m.Sizes)-1] }

// Layer returns views of the weight matrix and bias of layer l (0-based).
// Writes through them change the network.
func (m *MLP) Layer(l int) (w blas64.General, b []float64) {
	return layerViews(m.Sizes, m.Params, l)
}

// layerViews cuts layer l's weight and bias out of a flat parameter (or
// gradient) slice laid out as MLP.Params.
func layerViews(sizes []int, flat []float64, l int) (blas64.General, []float64) {
	off := 0
	for k := 0; k < l; k++ {
		off += sizes[k+1]*sizes[k] + sizes[k+1]
	}
	in, out := sizes[l], sizes[l+1]
	w := blas64.General{Rows: out, Cols: in, Stride: in, Data: flat[off : off+out*in : off+out*in]}
	return w, flat[off+out*in : off+out*in+out : off+out*in+out]
}

// MaxWidth bounds every layer width of a network read from a file:
// prediction allocates activations of predictBlock rows times the width,
// and the widths multiply into the parameter count.
const MaxWidth = 1 << 16

// Validate reports whether the network is well formed: at least two
// positive widths, as many parameters as they imply, all finite. It is
// meant for networks read from a file.
func (m *MLP) Validate() error {
	if len(m.Sizes) < 2 {
		return errors.New("nn: network needs at least an input and an output width")
	}
	n := 0
	for l, s := range m.Sizes {
		if s < 1 || s > MaxWidth {
			// The bound also keeps the parameter count below from
			// overflowing: widths of 7.4e18 once wrapped it round to
			// match a short parameter list.
			return fmt.Errorf("nn: layer %d has width %d, want 1 to %d", l, s, MaxWidth)
		}
		if l > 0 {
			n += m.Sizes[l]*m.Sizes[l-1] + m.Sizes[l]
		}
	}
	if len(m.Params) != n {
		return fmt.Errorf("nn: widths %v need %d parameters, have %d", m.Sizes, n, len(m.Params))
	}
	for i, p := range m.Params {
		if math.IsNaN(p) || math.IsInf(p, 0) {
			return fmt.Errorf("nn: parameter %d is %v", i, p)
		}
	}
	return nil
}

// Clone returns a deep copy of m.
func (m *MLP) Clone() *MLP {
	return &MLP{Sizes: append([]int(nil), m.Sizes...), Params: append([]float64(nil), m.Params...)}
}

// predictBlock bounds the rows pushed through the network at once, so
// predicting a million rows needs activations for predictBlock rows only.
const predictBlock = 2048

// Predict returns the network's outputs for the rows of x, one row of
// Outputs() values per input row. It panics if x does not have Inputs()
// columns, as mat does for mismatched dimensions.
func (m *MLP) Predict(x *mat.Dense) *mat.Dense {
	r, c := x.Dims()
	if c != m.Inputs() {
		panic(fmt.Sprintf("nn: Predict: x has %d columns, network has %d inputs", c, m.Inputs()))
	}
	out := mat.NewDense(r, m.Outputs(), nil)
	// Wide layers get fewer rows per block: activations stay near 4M
	// values (32 MB) per layer whatever the width.
	block := predictBlock
	for _, s := range m.Sizes {
		block = min(block, max(1, (4<<20)/s))
	}
	ws := newWorkspace(m.Sizes, min(r, block))
	xr := x.RawMatrix()
	or := out.RawMatrix()
	for start := 0; start < r; start += block {
		n := min(block, r-start)
		in := blas64.General{Rows: n, Cols: c, Stride: xr.Stride, Data: xr.Data[start*xr.Stride:]}
		y := ws.forward(m, in)
		copy(or.Data[start*or.Stride:(start+n)*or.Stride], y.Data[:n*y.Stride])
	}
	return out
}

// Predict1 returns the first output for every row of x, the common case of
// a network with one output. See Predict.
func (m *MLP) Predict1(x *mat.Dense) []float64 {
	p := m.Predict(x)
	raw := p.RawMatrix()
	out := make([]float64, raw.Rows)
	for i := range out {
		out[i] = raw.Data[i*raw.Stride]
	}
	return out
}

// workspace holds the activations of every layer for up to cap rows.
type workspace struct {
	sizes []int
	cap   int
	// act[l] is the output of layer l (after ReLU for hidden layers),
	// cap x sizes[l+1].
	act [][]float64
	// grad[l] is the gradient of the loss with respect to the
	// pre-activation of layer l, cap x sizes[l+1].
	grad [][]float64
	// wt[l] is the transpose of W_l (sizes[l] x sizes[l+1]), used by
	// products whose best orientation needs it (see forward, backward).
	wt [][]float64
}

func newWorkspace(sizes []int, capRows int) *workspace {
	ws := &workspace{sizes: sizes, cap: capRows}
	for l := 1; l < len(sizes); l++ {
		ws.act = append(ws.act, make([]float64, capRows*sizes[l]))
		ws.grad = append(ws.grad, make([]float64, capRows*sizes[l]))
		ws.wt = append(ws.wt, make([]float64, sizes[l]*sizes[l-1]))
	}
	return ws
}

func (ws *workspace) view(buf []float64, rows, cols int) blas64.General {
	return blas64.General{Rows: rows, Cols: cols, Stride: cols, Data: buf[: rows*cols : rows*cols]}
}

// transpose writes the transpose of a into dst (a.Cols x a.Rows).
func transpose(dst []float64, a blas64.General) blas64.General {
	t := blas64.General{Rows: a.Cols, Cols: a.Rows, Stride: a.Rows, Data: dst[: a.Rows*a.Cols : a.Rows*a.Cols]}
	for i := 0; i < a.Rows; i++ {
		row := a.Data[i*a.Stride : i*a.Stride+a.Cols]
		for j, v := range row {
			t.Data[j*t.Stride+i] = v
		}
	}
	return t
}

// A note on the orientation of the products. gonum's pure-Go GEMM works
// row by row with AXPY (no transposes, or Aᵀ B) or DOT (A Bᵀ) kernels of
// the inner length, and its AXPY loops skip zero multipliers. The
// activations after a ReLU, and the gradients masked by it, are about half
// zeros, so every product here puts such a matrix in the AXPY multiplier
// position, and picks the orientation whose kernels run over the longer
// of the two layer widths (a layer with one input or one output would
// otherwise make thousands of calls of length one). Each choice below
// halved the time of a 100-row, 1 -> 64 -> 64 -> 1 fit. OpenBLAS ignores
// the zeros but is faster anyway.

// Products are cut into blocks of rows (of the batch) for two reasons.
//
// gonum's pure-Go GEMM splits a product into 64x64 blocks and runs them on
// goroutines once there are four or more, which allocates on every call
// and gains nothing on two cores already shared by parallel trials.
//
// OpenBLAS (-tags openblas) runs a GEMM on all its threads once m·n·k
// exceeds 65536·4 = 2^18. For products this small, thread start-up, and on
// a loaded machine threads spinning while descheduled, cost far more than
// the arithmetic: a 100-row check-model fit took 1.6 to 4.5 s with
// OpenBLAS's default threads on the 2 shared cores, against 21 ms with
// OPENBLAS_NUM_THREADS=1. Blocks of at most 2^18 multiply-adds keep both
// libraries on their serial path without any setting.
//
// Blocks are disjoint rows (or, for Aᵀ B, a sum over row blocks), so the
// result does not depend on the block size beyond the order of additions.
const maxSerialWork = 1 << 18

// rowBlock returns the number of rows per block for a product whose other
// two dimensions multiply to work, with cols output columns.
func rowBlock(work, cols int) int {
	step := max(1, maxSerialWork/max(1, work))
	// gonum: fewer than four 64x64 blocks per call.
	colBlocks := (cols + 63) / 64
	return min(step, 64*max(1, 3/colBlocks))
}

// gemmRows computes C = A op(B) + beta C (op(B) = B or Bᵀ) in blocks of
// rows of A and C.
func gemmRows(tB blas.Transpose, a, b blas64.General, beta float64, c blas64.General) {
	step := rowBlock(a.Cols*c.Cols, c.Cols)
	for r := 0; r < a.Rows; r += step {
		k := min(step, a.Rows-r)
		as := blas64.General{Rows: k, Cols: a.Cols, Stride: a.Stride, Data: a.Data[r*a.Stride:]}
		cs := blas64.General{Rows: k, Cols: c.Cols, Stride: c.Stride, Data: c.Data[r*c.Stride:]}
		blas64.Gemm(blas.NoTrans, tB, 1, as, b, beta, cs)
	}
}

// gemmTN computes C = Aᵀ B as a sum over blocks of rows of A and B.
func gemmTN(a, b, c blas64.General) {
	step := rowBlock(a.Cols*b.Cols, b.Cols)
	beta := 0.0
	for r := 0; r < a.Rows; r += step {
		k := min(step, a.Rows-r)
		as := blas64.General{Rows: k, Cols: a.Cols, Stride: a.Stride, Data: a.Data[r*a.Stride:]}
		bs := blas64.General{Rows: k, Cols: b.Cols, Stride: b.Stride, Data: b.Data[r*b.Stride:]}
		blas64.Gemm(blas.Trans, blas.NoTrans, 1, as, bs, beta, c)
		beta = 1
	}
}

// forward pushes the rows of in through m and returns the output layer's
// activations (a view into the workspace).
func (ws *workspace) forward(m *MLP, in blas64.General) blas64.General {
	n := in.Rows
	a := in
	for l := 0; l < m.Layers(); l++ {
		w, b := m.Layer(l)
		z := ws.view(ws.act[l], n, w.Rows)
		// Z = b (broadcast) + A Wᵀ: fill the rows with the bias, then
		// one GEMM with beta = 1.
		for i := 0; i < n; i++ {
			copy(z.Data[i*z.Stride:i*z.Stride+z.Cols], b)
		}
		if w.Rows >= w.Cols {
			// AXPY over outputs, skipping the zeros of A.
			gemmRows(blas.NoTrans, a, transpose(ws.wt[l], w), 1, z)
		} else {
			// DOT over inputs: long kernels when there are few outputs.
			gemmRows(blas.Trans, a, w, 1, z)
		}
		if l < m.Layers()-1 {
			for i, v := range z.Data {
				if v < 0 {
					z.Data[i] = 0
				}
			}
		}
		a = z
	}
	return a
}

// backward computes the parameter gradient of the loss into g (laid out as
// MLP.Params, overwritten), given the input rows of the last forward call
// and dOut, the gradient with respect to the outputs (n x Outputs()).
func (ws *workspace) backward(m *MLP, in blas64.General, dOut []float64, g []float64) {
	n := in.Rows
	L := m.Layers()
	copy(ws.grad[L-1][:n*m.Outputs()], dOut)
	for l := L - 1; l >= 0; l-- {
		w, _ := m.Layer(l)
		gw, gb := layerViews(m.Sizes, g, l)
		dz := ws.view(ws.grad[l], n, w.Rows)
		var a blas64.General
		if l == 0 {
			a = in
		} else {
			a = ws.view(ws.act[l-1], n, w.Cols)
		}
		// dW = dZᵀ A (out x in).
		if w.Cols >= w.Rows {
			// AXPY over inputs, skipping the zeros of dZ.
			gemmTN(dz, a, gw)
		} else {
			// dWᵀ = Aᵀ dZ with AXPY over the (more numerous) outputs.
			gwt := ws.view(ws.wt[l], w.Cols, w.Rows)
			gemmTN(a, dz, gwt)
			transpose(gw.Data, gwt)
		}
		// db = column sums of dZ.
		for j := range gb {
			gb[j] = 0
		}
		for i := 0; i < n; i++ {
			row := dz.Data[i*dz.Stride : i*dz.Stride+dz.Cols]
			for j, v := range row {
				gb[j] += v
			}
		}
		if l == 0 {
			break // no one needs the gradient with respect to the inputs
		}
		// dA = dZ W (AXPY over inputs, skipping the zeros of dZ), then
		// through the ReLU: zero where the unit was off.
		da := ws.view(ws.grad[l-1], n, w.Cols)
		gemmRows(blas.NoTrans, dz, w, 0, da)
		for i, v := range a.Data[:n*a.Stride] {
			if v <= 0 {
				da.Data[i] = 0
			}
		}
	}
}
