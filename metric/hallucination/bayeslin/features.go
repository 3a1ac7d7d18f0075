package bayeslin

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
)

// Features maps a scalar input to a feature vector φ(x).
type Features interface {
	// Dim returns the number of features d.
	Dim() int
	// Eval stores φ(x) in dst, which has Dim() elements.
	Eval(x float64, dst []float64)
	// String returns the specification ParseFeatures reads back.
	String() string
}

// Poly are the monomials 1, x, ..., x^Degree (Degree+1 features), the basis
// of the paper's polynomial regression task (Appendix G.1.2, d = 3).
type Poly struct{ Degree int }

func (p Poly) Dim() int { return p.Degree + 1 }

func (p Poly) Eval(x float64, dst []float64) {
	v := 1.0
	for i := range p.Degree + 1 {
		dst[i] = v
		v *= x
	}
}

func (p Poly) String() string { return "poly:" + strconv.Itoa(p.Degree) }

// ReLU are the hidden units of a random one-hidden-layer ReLU network,
// φ_i(x) = max(0, a_i (x - c_i)) / sqrt(width), with slopes a_i ~ N(0, 2)
// (He initialisation for one input) and kinks c_i ~ U[-2, 2] spread over the
// input domain. With a Gaussian prior on the output weights, f = w·φ is a
// random ReLU network with a learnable last layer, the linear-Gaussian
// relative of the paper's random-MLP task (Section 3.1). The 1/sqrt(width)
// scaling keeps the prior variance of f(x) independent of the width
// (about x² + 4/3 for prior scale 1).
type ReLU struct {
	width  int
	seed   uint64
	slopes []float64
	kinks  []float64
}

// NewReLU returns width random ReLU features drawn with the given seed.
func NewReLU(width int, seed uint64) *ReLU {
	r := rand.New(rand.NewPCG(seed, 0x5eed_0003))
	f := &ReLU{width: width, seed: seed, slopes: make([]float64, width), kinks: make([]float64, width)}
	for i := range width {
		f.slopes[i] = math.Sqrt2 * r.NormFloat64()
		f.kinks[i] = -2 + 4*r.Float64()
	}
	return f
}

func (f *ReLU) Dim() int { return f.width }

func (f *ReLU) Eval(x float64, dst []float64) {
	scale := 1 / math.Sqrt(float64(f.width))
	for i, a := range f.slopes {
		dst[i] = max(0, a*(x-f.kinks[i])) * scale
	}
}

func (f *ReLU) String() string { return fmt.Sprintf("relu:%d:%d", f.width, f.seed) }

// ParseFeatures reads a feature specification: "poly:DEG" (0 <= DEG <= 12)
// or "relu:WIDTH[:SEED]" (1 <= WIDTH <= 4096, SEED defaults to 1).
func ParseFeatures(s string) (Features, error) {
	parts := strings.Split(s, ":")
	bad := func(why string) error {
		return fmt.Errorf("bayeslin: features %q: %s (want poly:DEG or relu:WIDTH:SEED)", s, why)
	}
	switch parts[0] {
	case "poly":
		if len(parts) != 2 {
			return nil, bad("want one number after poly:")
		}
		deg, err := strconv.Atoi(parts[1])
		if err != nil || deg < 0 || deg > 12 {
			return nil, bad("degree must be an integer in [0, 12]")
		}
		return Poly{Degree: deg}, nil
	case "relu":
		if len(parts) != 2 && len(parts) != 3 {
			return nil, bad("want relu:WIDTH or relu:WIDTH:SEED")
		}
		w, err := strconv.Atoi(parts[1])
		if err != nil || w < 1 || w > 4096 {
			return nil, bad("width must be an integer in [1, 4096]")
		}
		seed := uint64(1)
		if len(parts) == 3 {
			if seed, err = strconv.ParseUint(parts[2], 10, 64); err != nil {
				return nil, bad("seed must be a non-negative integer")
			}
		}
		return NewReLU(w, seed), nil
	}
	return nil, bad("unknown feature family " + strconv.Quote(parts[0]))
}
