package inception

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/format/torchfile"
)

// TestNewModelErrors: a state dict that is not the FID network names the
// first missing key or the key with the wrong shape.
func TestNewModelErrors(t *testing.T) {
	full := zeroStateDict()
	if _, err := NewModel("w.pth", full); err != nil {
		t.Fatalf("complete state dict: %v", err)
	}
	for _, tc := range []struct {
		name string
		edit func(sd map[string]*torchfile.Tensor)
		want string
	}{
		{"missing", func(sd map[string]*torchfile.Tensor) { delete(sd, "Mixed_6c.branch7x7dbl_3.bn.running_var") }, `"Mixed_6c.branch7x7dbl_3.bn.running_var": missing`},
		{"shape", func(sd map[string]*torchfile.Tensor) {
			sd["Mixed_7b.branch3x3_2a.conv.weight"] = &torchfile.Tensor{Shape: []int{384, 384, 3, 1}, Data: make([]float64, 384*384*3)}
		}, `"Mixed_7b.branch3x3_2a.conv.weight": has shape [384 384 3 1], want [384 384 1 3]`},
		{"fc classes", func(sd map[string]*torchfile.Tensor) {
			sd["fc.bias"] = &torchfile.Tensor{Shape: []int{1000}, Data: make([]float64, 1000)}
		}, `"fc.bias": has shape [1000], want [1008]`},
		{"negative variance", func(sd map[string]*torchfile.Tensor) {
			sd["Conv2d_1a_3x3.bn.running_var"] = &torchfile.Tensor{Shape: []int{32}, Data: make([]float64, 32)}
			sd["Conv2d_1a_3x3.bn.running_var"].Data[3] = -1
		}, "channel 3 gives a non-finite BatchNorm scale"},
		// Non-finite weights would give NaN features and exit 0.
		{"NaN weight", func(sd map[string]*torchfile.Tensor) {
			sd["fc.weight"] = withValue(sd["fc.weight"], 5000, math.NaN())
		}, `"fc.weight": element 5000 is NaN`},
		{"infinite weight", func(sd map[string]*torchfile.Tensor) {
			sd["Mixed_5b.branch1x1.conv.weight"] = withValue(sd["Mixed_5b.branch1x1.conv.weight"], 7, math.Inf(-1))
		}, `"Mixed_5b.branch1x1.conv.weight": element 7 is -Inf`},
		{"NaN running mean", func(sd map[string]*torchfile.Tensor) {
			sd["Conv2d_2a_3x3.bn.running_mean"] = withValue(sd["Conv2d_2a_3x3.bn.running_mean"], 0, math.NaN())
		}, `"Conv2d_2a_3x3.bn.running_mean": element 0 is NaN`},
		{"beyond float32", func(sd map[string]*torchfile.Tensor) {
			sd["fc.bias"] = withValue(sd["fc.bias"], 2, 1e39)
		}, `"fc.bias": element 2 is 1e+39`},
		{"overflow once folded", func(sd map[string]*torchfile.Tensor) {
			sd["Conv2d_1a_3x3.conv.weight"] = withValue(sd["Conv2d_1a_3x3.conv.weight"], 27, 3e38)
			sd["Conv2d_1a_3x3.bn.weight"] = withValue(sd["Conv2d_1a_3x3.bn.weight"], 1, 10)
		}, `"Conv2d_1a_3x3.conv.weight": channel 1 overflows float32`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sd := make(map[string]*torchfile.Tensor, len(full))
			for k, v := range full {
				sd[k] = v
			}
			tc.edit(sd)
			_, err := NewModel("w.pth", sd)
			var ie *fault.InputError
			if !errors.As(err, &ie) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an InputError containing %q", err, tc.want)
			}
		})
	}
}

// withValue returns a copy of t with element i set to v.
func withValue(t *torchfile.Tensor, i int, v float64) *torchfile.Tensor {
	c := &torchfile.Tensor{Shape: t.Shape, DType: t.DType, Data: append([]float64(nil), t.Data...)}
	c.Data[i] = v
	return c
}

func onesF64(n int) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = 1
	}
	return x
}
