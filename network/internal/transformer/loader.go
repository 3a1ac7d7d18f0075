package transformer

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"os"
	"slices"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/format/weights"
)

// Loader takes the tensors of a network out of a state dict by name,
// checking their shapes and values. Its errors are one-line
// *fault.InputError values naming File and the tensor's full name.
type Loader struct {
	File    string                     // the weights file, named in errors
	Tensors map[string]*weights.Tensor // the state dict
	// Prefix is put before every name ("bert.", "visual.").
	Prefix string
	// Hint ends the message of a missing tensor or a wrong shape, in
	// parentheses: "not the weights of dinov2-vits14?".
	Hint string
}

func (l *Loader) fail(key, format string, a ...any) error {
	msg := fmt.Sprintf(format, a...)
	if l.Hint != "" {
		msg += " (" + l.Hint + ")"
	}
	return &fault.InputError{File: l.File, Key: key, Msg: msg}
}

// Has reports whether the state dict holds name.
func (l *Loader) Has(name string) bool {
	_, ok := l.Tensors[l.Prefix+name]
	return ok
}

// Shape returns the shape of tensor name, an error if it is missing.
func (l *Loader) Shape(name string) ([]int, error) {
	t, ok := l.Tensors[l.Prefix+name]
	if !ok {
		return nil, l.fail(l.Prefix+name, "missing from the state dict")
	}
	return t.Shape, nil
}

// Tensor returns the values of tensor name, row-major, which must have
// the given shape and hold finite values only. The slice is the state
// dict's own: a caller that changes it copies it first.
func (l *Loader) Tensor(name string, shape ...int) ([]float32, error) {
	k := l.Prefix + name
	t, ok := l.Tensors[k]
	if !ok {
		return nil, l.fail(k, "missing from the state dict")
	}
	if !slices.Equal(t.Shape, shape) {
		return nil, l.fail(k, "has shape %v, want %v", t.Shape, shape)
	}
	if i, ok := AllFinite(t.Data); !ok {
		return nil, &fault.InputError{File: l.File, Key: k, Msg: fmt.Sprintf("element %d is %v", i, t.Data[i])}
	}
	return t.Data, nil
}

// AllFinite reports whether every value of v is finite, and else the
// index of the first that is not.
func AllFinite(v []float32) (int, bool) {
	for i, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return i, false
		}
	}
	return -1, true
}

// Linear loads the nn.Linear name: name.weight, out×in as PyTorch keeps
// it, and name.bias of out values.
func (l *Loader) Linear(name string, out, in int) (Linear, error) {
	li, err := l.LinearNoBias(name, out, in)
	if err != nil {
		return Linear{}, err
	}
	if li.B, err = l.Tensor(name+".bias", out); err != nil {
		return Linear{}, err
	}
	return li, nil
}

// LinearNoBias loads the nn.Linear name of a layer without bias: its
// weight alone, out×in.
func (l *Loader) LinearNoBias(name string, out, in int) (Linear, error) {
	w, err := l.Tensor(name+".weight", out, in)
	if err != nil {
		return Linear{}, err
	}
	return Linear{In: in, Out: out, W: w}, nil
}

// normLimit bounds what a LayerNorm may output, √(n−1)·|weight| + |bias|
// (see the package documentation): half of float32's range leaves room
// for the rounding of the normalised value and of the product.
const normLimit = math.MaxFloat32 / 2

// Norm loads the nn.LayerNorm name of width n (name.weight, name.bias)
// with epsilon eps. Beside Tensor's checks, it refuses weights with
// which the norm of a finite column could overflow float32: an element
// j with √(n−1)·|weight[j]| + |bias[j]| past half of float32's range.
func (l *Loader) Norm(name string, n int, eps float32) (Norm, error) {
	g, err := l.Tensor(name+".weight", n)
	if err != nil {
		return Norm{}, err
	}
	b, err := l.Tensor(name+".bias", n)
	if err != nil {
		return Norm{}, err
	}
	r := math.Sqrt(float64(n - 1))
	for j := range g {
		gj, bj := r*math.Abs(float64(g[j])), math.Abs(float64(b[j]))
		if gj+bj <= normLimit {
			continue
		}
		k, v := l.Prefix+name+".weight", g[j]
		if bj > gj {
			k, v = l.Prefix+name+".bias", b[j]
		}
		return Norm{}, &fault.InputError{File: l.File, Key: k, Msg: fmt.Sprintf(
			"element %d is %g: this LayerNorm of %d values could output √%d·|weight|+|bias| = %.3g there, over the %.2g (half of float32's range) a norm may reach", j, v, n, n-1, gj+bj, normLimit)}
	}
	return Norm{G: g, B: b, Eps: eps}, nil
}

// FileSHA256 returns the hex SHA-256 of a weights file, which names the
// weights in a network's identity.
func FileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", &fault.InputError{File: path, Msg: "cannot read weights", Err: err}
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", &fault.InputError{File: path, Msg: "cannot read weights", Err: err}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// CheckOutput returns nil when every value of out, what a network
// computed for item i of a batch, is finite, and else a
// *fault.InputError naming the weights file: the weights are finite
// (Loader refuses the others) and the inputs of bounded size, so a NaN
// or ±Inf there means weights so large that a product overflowed
// float32 (a finite 3e38 in a linear layer, say).
func CheckOutput(file string, i int, out []float32) error {
	if j, ok := AllFinite(out); !ok {
		return &fault.InputError{File: file, Msg: fmt.Sprintf("the network computes %v (value %d of output %d) from these finite weights: some are too large for float32's arithmetic", out[j], j, i)}
	}
	return nil
}

// CheckOutputs is CheckOutput of every output of a batch.
func CheckOutputs(file string, out [][]float32) error {
	for i, o := range out {
		if err := CheckOutput(file, i, o); err != nil {
			return err
		}
	}
	return nil
}

// CheckHeads refuses a head count that does not split the hidden width
// into equal heads (or is not positive): a one-line *fault.InputError
// naming file and key, the setting that gave it.
//
// Only this much of a head count can be checked. Every network here
// keeps all its heads packed in hidden × hidden projections (BERT's
// query, key and value; DeBERTa's in_proj, 3·hidden × hidden, each
// head's q, k and v rows together, and its pos_proj and pos_q_proj;
// ViT's and CLIP's qkv or in_proj, 3·width × width), and no tensor of
// theirs has a per-head dimension: DeBERTa's rel_embeddings are 2·span
// × hidden, its q_bias and v_bias hidden long. Any divisor of the width
// therefore fits every shape of the checkpoint, and a count that
// disagrees with the one the checkpoint was trained with (8 heads of 96
// read as 12 of 64) loads and runs, wrongly. OpenAI's TorchScript CLIP
// archives keep their count only in the archive's code, which is not
// read; the presets of vit fix it.
func CheckHeads(file, key string, hidden, heads int) error {
	if heads < 1 || hidden%heads != 0 {
		return &fault.InputError{File: file, Key: key, Msg: fmt.Sprintf("%d heads do not split the hidden width %d into equal heads", heads, hidden)}
	}
	return nil
}
