package transformer

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/format/weights"
)

func tensor(shape []int, v ...float32) *weights.Tensor {
	n := 1
	for _, d := range shape {
		n *= d
	}
	data := make([]float32, n)
	copy(data, v)
	return &weights.Tensor{Shape: shape, Data: data}
}

// loadErr checks that err is a one-line *fault.InputError of file w.st
// and key, containing want.
func loadErr(t *testing.T, what string, err error, key, want string) {
	t.Helper()
	var ie *fault.InputError
	if !errors.As(err, &ie) || ie.File != "w.st" || ie.Key != key || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
		t.Errorf("%s: %v, want a one-line error of w.st, key %q, saying %q", what, err, key, want)
	}
}

func TestLoader(t *testing.T) {
	sd := map[string]*weights.Tensor{
		"m.fc.weight":     tensor([]int{3, 2}, 1, 2, 3, 4, 5, 6),
		"m.fc.bias":       tensor([]int{3}, 7, 8, 9),
		"m.ln.weight":     tensor([]int{4}, 1, 1, 1, 1),
		"m.ln.bias":       tensor([]int{4}),
		"m.bad.weight":    tensor([]int{2, 2}, 1, float32(math.NaN())),
		"m.inf.weight":    tensor([]int{4}, 1, 1, float32(math.Inf(-1))),
		"m.inf.bias":      tensor([]int{4}),
		"m.nobias.weight": tensor([]int{2, 3}),
	}
	l := &Loader{File: "w.st", Tensors: sd, Prefix: "m.", Hint: "not the weights of this model?"}
	fc, err := l.Linear("fc", 3, 2)
	if err != nil || fc.In != 2 || fc.Out != 3 || len(fc.W) != 6 || fc.B[2] != 9 {
		t.Fatalf("Linear: %+v, %v", fc, err)
	}
	nb, err := l.LinearNoBias("nobias", 2, 3)
	if err != nil || nb.B != nil || nb.In != 3 {
		t.Fatalf("LinearNoBias: %+v, %v", nb, err)
	}
	nm, err := l.Norm("ln", 4, 1e-5)
	if err != nil || len(nm.G) != 4 || nm.Eps != 1e-5 {
		t.Fatalf("Norm: %+v, %v", nm, err)
	}
	if !l.Has("fc.weight") || l.Has("m.fc.weight") {
		t.Error("Has does not put the prefix before the name")
	}
	if s, err := l.Shape("fc.weight"); err != nil || len(s) != 2 {
		t.Errorf("Shape: %v, %v", s, err)
	}
	_, err = l.Shape("gone")
	loadErr(t, "Shape of a missing tensor", err, "m.gone", "missing from the state dict (not the weights of this model?)")
	_, err = l.Linear("fc", 2, 3)
	loadErr(t, "transposed shape", err, "m.fc.weight", "has shape [3 2], want [2 3] (not the weights of this model?)")
	_, err = l.Tensor("fc.bias", 3, 1)
	loadErr(t, "extra dimension", err, "m.fc.bias", "has shape [3], want [3 1]")
	_, err = l.Linear("nobias", 2, 3)
	loadErr(t, "missing bias", err, "m.nobias.bias", "missing")
	_, err = l.Tensor("bad.weight", 2, 2)
	loadErr(t, "NaN", err, "m.bad.weight", "element 1 is NaN")
	_, err = l.Norm("inf", 4, 1e-5)
	loadErr(t, "-Inf", err, "m.inf.weight", "element 2 is -Inf")
	if i, ok := AllFinite([]float32{0, -1, 3e38}); !ok || i != -1 {
		t.Errorf("AllFinite of finite values: %d, %v", i, ok)
	}
	if i, ok := AllFinite([]float32{0, float32(math.Inf(1)), float32(math.NaN())}); ok || i != 1 {
		t.Errorf("AllFinite: %d, %v, want 1, false", i, ok)
	}
}

// TestNormBound checks the LayerNorm bound at its edge: the largest
// weight Norm accepts leaves the output of the most extreme column
// finite (the normalised value reaches √(n−1) there), and a weight a
// little larger, or a bias that takes the sum past the bound, is
// refused naming the tensor that contributes most.
func TestNormBound(t *testing.T) {
	const n = 32
	edge := float32(normLimit / math.Sqrt(n-1))
	for _, c := range []struct {
		g, b    float32
		refused string // the key blamed, "" when accepted
	}{
		{edge, 0, ""},
		{-edge, 0, ""},
		{edge * 1.001, 0, "ln.weight"},
		{edge / 2, normLimit * 0.6, "ln.bias"},
		{edge * 0.9, normLimit * 0.2, "ln.weight"},
		{1, math.MaxFloat32 / 4, ""},
	} {
		g, b := tensor([]int{n}), tensor([]int{n})
		for i := range g.Data {
			g.Data[i] = 1
		}
		g.Data[0], b.Data[0] = c.g, c.b
		l := &Loader{File: "w.st", Tensors: map[string]*weights.Tensor{"ln.weight": g, "ln.bias": b}}
		nm, err := l.Norm("ln", n, 1e-12)
		if c.refused != "" {
			loadErr(t, "past the bound", err, c.refused, "this LayerNorm of 32 values could output")
			continue
		}
		if err != nil {
			t.Errorf("g %g b %g: %v", c.g, c.b, err)
			continue
		}
		// One column far from the rest normalises to ±√(n−1) at row 0:
		// the largest value a LayerNorm outputs.
		for _, sign := range []float32{1, -1} {
			x := make([]float32, n)
			x[0] = sign * 1e30
			dst := make([]float32, n)
			nm.Cols(x, 1, dst)
			rows := make([]float32, n)
			nm.Rows(x, rows)
			for _, out := range [][]float32{dst, rows} {
				if i, ok := AllFinite(out); !ok {
					t.Errorf("g %g b %g: output %d is %v", c.g, c.b, i, out[i])
				}
			}
			if z := float64(dst[0]) / float64(c.g); c.b == 0 && math.Abs(z) < 0.99*math.Sqrt(n-1) {
				t.Errorf("the test column normalises to %g, not near ±√%d", z, n-1)
			}
		}
	}
}

func TestCheckOutput(t *testing.T) {
	if err := CheckOutput("w.st", 0, []float32{1, -3e38}); err != nil {
		t.Error(err)
	}
	err := CheckOutput("w.st", 4, []float32{1, float32(math.NaN())})
	loadErr(t, "NaN output", err, "", "the network computes NaN (value 1 of output 4)")
	err = CheckOutputs("w.st", [][]float32{{1}, {2, float32(math.Inf(1))}})
	loadErr(t, "+Inf output", err, "", "the network computes +Inf (value 1 of output 1)")
}
