package inception

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/genlens/genlens/internal/format/torchfile"
	"github.com/genlens/genlens/internal/tensor/linalg"
	"github.com/genlens/genlens/internal/tensor/simdblas"
)

// TestPools compares the separable pools with a direct 3×3 window on odd
// and even map sizes, including the 1×1 and 2×2 maps where every window
// is clipped by the padding.
func TestPools(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	ar := new(arena)
	for _, sz := range [][2]int{{1, 1}, {2, 2}, {3, 5}, {8, 8}, {17, 17}, {35, 36}, {71, 71}, {147, 147}} {
		in := fmap{2, sz[0], sz[1], make([]float32, 2*sz[0]*sz[1])}
		for i := range in.d {
			in.d[i] = float32(rng.NormFloat64())
		}
		for _, sp := range [][2]int{{1, 1}, {2, 0}} {
			stride, pad := sp[0], sp[1]
			if outSize(in.h, 3, stride, pad) < 1 || outSize(in.w, 3, stride, pad) < 1 {
				continue
			}
			got := maxPool(in, stride, pad, nil, 0, ar)
			want := naivePool(in, stride, pad, true)
			compare(t, "max", sz, got.d, want)
		}
		compare(t, "avg", sz, avgPool(in, ar).d, naivePool(in, 1, 1, false))
	}
}

func compare(t *testing.T, what string, sz [2]int, got, want []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s %v: %d outputs, want %d", what, sz, len(got), len(want))
	}
	for i := range got {
		if math.Abs(float64(got[i]-want[i])) > 1e-6 {
			t.Fatalf("%s %v: output %d is %g, want %g", what, sz, i, got[i], want[i])
		}
	}
}

// naivePool is the textbook 3×3 pool: the maximum, or the mean over the
// pixels inside the map (count_include_pad=False).
func naivePool(in fmap, stride, pad int, isMax bool) []float32 {
	ho, wo := outSize(in.h, 3, stride, pad), outSize(in.w, 3, stride, pad)
	out := make([]float32, in.c*ho*wo)
	for c := 0; c < in.c; c++ {
		for oy := 0; oy < ho; oy++ {
			for ox := 0; ox < wo; ox++ {
				m, s, n := float32(math.Inf(-1)), float32(0), 0
				for i := 0; i < 3; i++ {
					for j := 0; j < 3; j++ {
						y, x := oy*stride+i-pad, ox*stride+j-pad
						if y < 0 || y >= in.h || x < 0 || x >= in.w {
							continue
						}
						v := in.d[(c*in.h+y)*in.w+x]
						m, s, n = max(m, v), s+v, n+1
					}
				}
				if isMax {
					out[(c*ho+oy)*wo+ox] = m
				} else {
					out[(c*ho+oy)*wo+ox] = s / float32(n)
				}
			}
		}
	}
	return out
}

// TestConv compares the im2col/GEMM convolution (with BatchNorm bias and
// ReLU) against a direct sum, for the kernel shapes, strides and paddings
// of the network; the 64-channel 3×3 case on 17×17 spans two im2col bands
// that split an output row.
func TestConv(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, tc := range []struct{ cin, cout, kh, kw, stride, ph, pw, h, w int }{
		{3, 8, 3, 3, 2, 0, 0, 11, 9},
		{5, 7, 1, 1, 1, 0, 0, 6, 6},
		{4, 6, 1, 7, 1, 0, 3, 9, 9},
		{4, 6, 7, 1, 1, 3, 0, 9, 9},
		{6, 5, 5, 5, 1, 2, 2, 7, 8},
		{64, 20, 3, 3, 1, 1, 1, 17, 17},
		{8, 9, 3, 3, 2, 0, 0, 17, 17},
		{5, 13, 3, 3, 1, 0, 0, 10, 9},
		{200, 190, 3, 3, 1, 1, 1, 20, 19},
		// More output pixels than one panel of the packed product holds.
		{2, 3, 1, 7, 1, 0, 3, 70, 71},
		// The one-dimensional Winograd forms: tiles that wrap from one
		// row (column) of the map to the next in a group of 16, and
		// maps whose side is not a multiple of the tile.
		{24, 20, 1, 7, 1, 0, 3, 17, 17},
		{24, 20, 7, 1, 1, 3, 0, 17, 17},
		{6, 5, 7, 1, 1, 3, 0, 12, 5},
		{6, 5, 1, 7, 1, 0, 3, 3, 14},
		{24, 20, 1, 3, 1, 0, 1, 8, 8},
		{24, 20, 3, 1, 1, 1, 0, 8, 8},
		{6, 5, 3, 1, 1, 1, 0, 9, 7},
		{3, 4, 3, 3, 2, 0, 0, 131, 133},
	} {
		k := tc.cin * tc.kh * tc.kw
		cv := &conv{cin: tc.cin, cout: tc.cout, kh: tc.kh, kw: tc.kw, stride: tc.stride, ph: tc.ph, pw: tc.pw,
			w: make([]float32, tc.cout*k), b: make([]float32, tc.cout)}
		for i := range cv.w {
			cv.w[i] = float32(rng.NormFloat64())
		}
		for i := range cv.b {
			cv.b[i] = float32(rng.NormFloat64())
		}
		in := fmap{tc.cin, tc.h, tc.w, make([]float32, tc.cin*tc.h*tc.w)}
		for i := range in.d {
			in.d[i] = float32(rng.NormFloat64())
		}
		ho, wo := outSize(tc.h, tc.kh, tc.stride, tc.ph), outSize(tc.w, tc.kw, tc.stride, tc.pw)
		// Each form the network may use: the weights as they are (the
		// OpenBLAS build), packed for the pure-Go kernel, and the
		// Winograd form of 3×3 stride-1 convolutions.
		forms := map[string]*conv{"plain": cv}
		if linalg.SgemmKernel() {
			p := *cv
			p.packed = simdblas.Pack(tc.cout, k, cv.w, k)
			forms["packed"] = &p
			if tc.kh == 3 && tc.kw == 3 && tc.stride == 1 {
				wg4 := *cv
				wg4.wg = newWinograd4(tc.cout, tc.cin, cv.w)
				forms["winograd4"] = &wg4
			}
			if s := (convSpec{"", tc.cin, tc.cout, tc.kh, tc.kw, tc.stride, tc.ph, tc.pw}); useWinograd1D(s) {
				w1 := *cv
				r := max(tc.kh, tc.kw)
				w1.w1 = newWinograd1D(tc.cout, tc.cin, r, tc.kw == 1, winograd1dForms[r], cv.w)
				forms["winograd1d"] = &w1
			}
		}
		for form, cv := range forms {
			var scratch []float32
			got := cv.apply(in, nil, 0, &scratch, new(arena))
			if got.c != tc.cout || got.h != ho || got.w != wo {
				t.Fatalf("%+v %s: output %dx%dx%d", tc, form, got.c, got.h, got.w)
			}
			checkConv(t, form, cv, in, got, ho, wo)
		}
	}
}

// checkConv compares got with a direct sum of cv over in, in float64.
func checkConv(t *testing.T, form string, cv *conv, in fmap, got fmap, ho, wo int) {
	t.Helper()
	tc := struct{ cin, cout, kh, kw, stride, ph, pw, h, w int }{cv.cin, cv.cout, cv.kh, cv.kw, cv.stride, cv.ph, cv.pw, in.h, in.w}
	{
		for o := 0; o < tc.cout; o++ {
			for oy := 0; oy < ho; oy++ {
				for ox := 0; ox < wo; ox++ {
					s, scale := float64(cv.b[o]), 0.0
					for c := 0; c < tc.cin; c++ {
						for i := 0; i < tc.kh; i++ {
							for j := 0; j < tc.kw; j++ {
								y, x := oy*tc.stride+i-tc.ph, ox*tc.stride+j-tc.pw
								if y >= 0 && y < tc.h && x >= 0 && x < tc.w {
									p := float64(cv.w[((o*tc.cin+c)*tc.kh+i)*tc.kw+j]) * float64(in.d[(c*tc.h+y)*tc.w+x])
									s, scale = s+p, scale+math.Abs(p)
								}
							}
						}
					}
					want := math.Max(s, 0)
					tol := 1e-4 * (1 + math.Abs(want))
					if form == "winograd4" {
						// F(4×4)'s transforms (coefficients up to 8 and
						// 1/24) lose a few float32 roundings of the
						// terms' magnitude, which a sum that nearly
						// cancels shows: up to 1e-6 of Σ|w·x| here.
						tol += 3e-6 * scale
					}
					if form == "winograd1d" {
						tol += winograd1dTol * scale
					}
					if g := float64(got.d[(o*ho+oy)*wo+ox]); math.Abs(g-want) > tol {
						t.Fatalf("%+v %s: out[%d][%d][%d] = %g, want %g", tc, form, o, oy, ox, g, want)
					}
				}
			}
		}
	}
}

// TestForwardErrors: a cancelled context stops the pass, and a batch of
// the wrong size is refused before any work.
func TestForwardErrors(t *testing.T) {
	m, err := NewModel("zero.pth", zeroStateDict())
	if err != nil {
		t.Fatal(err)
	}
	x := make([]float32, 3*Size*Size)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := m.Forward(ctx, [][]float32{x, x}, 2); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: got %v", err)
	}
	if _, err := m.Forward(context.Background(), [][]float32{x[:10]}, 1); err == nil || !strings.Contains(err.Error(), "image 0 has 10 values") {
		t.Errorf("short image: got %v", err)
	}
	// All-zero weights with unit BatchNorm: every feature is 0, logits
	// are the (zero) bias.
	f, err := m.Forward(context.Background(), [][]float32{x}, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range Outputs {
		if v := f[0].Get(o); len(v) != o.Dim() || v[0] != 0 {
			t.Errorf("%s: %d values, first %g", o, len(v), v[0])
		}
	}
}

// zeroStateDict is a complete FID state dict of zero weights and unit
// BatchNorm statistics.
func zeroStateDict() map[string]*torchfile.Tensor {
	sd := map[string]*torchfile.Tensor{}
	for _, s := range specs() {
		sd[s.name+".conv.weight"] = &torchfile.Tensor{Shape: []int{s.cout, s.cin, s.kh, s.kw}, Data: make([]float64, s.cout*s.cin*s.kh*s.kw)}
		for _, p := range []string{"weight", "bias", "running_mean", "running_var"} {
			sd[s.name+".bn."+p] = &torchfile.Tensor{Shape: []int{s.cout}, Data: onesF64(s.cout)}
		}
		sd[s.name+".bn.bias"] = &torchfile.Tensor{Shape: []int{s.cout}, Data: make([]float64, s.cout)}
		sd[s.name+".bn.running_mean"] = &torchfile.Tensor{Shape: []int{s.cout}, Data: make([]float64, s.cout)}
	}
	sd["fc.weight"] = &torchfile.Tensor{Shape: []int{Classes, 2048}, Data: make([]float64, Classes*2048)}
	sd["fc.bias"] = &torchfile.Tensor{Shape: []int{Classes}, Data: make([]float64, Classes)}
	return sd
}

// TestFCBatch checks that the fc layer applied to a batch at once gives
// every image the logits of its own product, bit for bit.
func TestFCBatch(t *testing.T) {
	m := randomModel(t)
	if m.fcPacked == nil {
		t.Skip("no SGEMM kernel: fc runs per image")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	fs := make([]Features, 5)
	for i := range fs {
		fs[i].Pool2048 = make([]float32, 2048)
		for j := range fs[i].Pool2048 {
			fs[i].Pool2048[j] = rng.Float32()
		}
	}
	m.fcBatch(fs)
	for i, f := range fs {
		want := make([]float32, Classes)
		linalg.Sgemm(false, false, Classes, 1, 2048, 1, m.fcW, 2048, f.Pool2048, 1, 0, want, 1)
		for j, w := range want {
			if f.LogitsUnbiased[j] != w || f.Logits[j] != w+m.fcB[j] {
				t.Fatalf("image %d logit %d: unbiased %v, biased %v; want %v, %v", i, j, f.LogitsUnbiased[j], f.Logits[j], w, w+m.fcB[j])
			}
		}
	}
}

// winograd1dTol bounds the error of the one-dimensional Winograd forms
// relative to Σ|w·x|: F(4, 7)'s ten points give transforms with
// coefficients up to 8.2 (measured: 6e-7 of Σ|w·x| on 160 channels).
const winograd1dTol = 3e-6

// TestArenaSurvivesGC wants the arena of a finished image back for the
// next one after garbage collections, which empty a sync.Pool: a fresh
// arena's slabs are pages to fault in again.
func TestArenaSurvivesGC(t *testing.T) {
	a := getArena()
	a.alloc(10)
	putArena(a)
	runtime.GC()
	runtime.GC()
	b := getArena()
	defer putArena(b)
	if b != a {
		t.Fatal("the finished arena was not reused after a garbage collection")
	}
	if b.i != 0 || b.off != 0 {
		t.Fatalf("reused arena at slab %d offset %d, want it reset", b.i, b.off)
	}
}

// TestAvgPooledConv wants the pool branch computed product first
// (applyAvgPooled) to match the 1×1 convolution of the pooled map, to
// rounding, with the packed weights and without, on the map sizes of the
// network's pool branches.
func TestAvgPooledConv(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, tc := range []struct{ cin, cout, hw int }{{192, 32, 35}, {768, 192, 17}, {1280, 192, 8}, {5, 3, 2}} {
		cv := &conv{cin: tc.cin, cout: tc.cout, kh: 1, kw: 1, stride: 1, w: make([]float32, tc.cout*tc.cin), b: make([]float32, tc.cout)}
		for i := range cv.w {
			cv.w[i] = float32(rng.NormFloat64() * 0.1)
		}
		for i := range cv.b {
			cv.b[i] = float32(rng.NormFloat64())
		}
		in := fmap{tc.cin, tc.hw, tc.hw, make([]float32, tc.cin*tc.hw*tc.hw)}
		for i := range in.d {
			in.d[i] = float32(rng.NormFloat64())
		}
		forms := map[string]*conv{"sgemm": cv}
		if linalg.SgemmKernel() {
			p := *cv
			p.packed = simdblas.Pack(tc.cout, tc.cin, cv.w, tc.cin)
			forms["packed"] = &p
		}
		for form, cv := range forms {
			ar := new(arena)
			var scratch []float32
			want := cv.apply(avgPool(in, ar), nil, 0, &scratch, ar)
			got := fmap{tc.cout + 2, tc.hw, tc.hw, make([]float32, (tc.cout+2)*tc.hw*tc.hw)}
			cv.applyAvgPooled(in, &got, 1, ar)
			n := tc.hw * tc.hw
			for i, w := range want.d {
				if g := got.d[n+i]; math.Abs(float64(g-w)) > 1e-5*(1+math.Abs(float64(w))) {
					t.Fatalf("%+v %s: value %d = %v, the pooled map's convolution %v", tc, form, i, g, w)
				}
			}
		}
	}
}
