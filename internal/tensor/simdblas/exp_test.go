package simdblas

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestExp32(t *testing.T) {
	var worst float64
	for x := -87.0; x < 88.3; x += 0.001 {
		f := float32(x)
		want := math.Exp(float64(f))
		got := float64(Exp32(f))
		worst = math.Max(worst, math.Abs(got-want)/want)
	}
	// float32's unit roundoff is 6e-8: a few units at most.
	if worst > 2.5e-7 {
		t.Errorf("Exp32: relative error %.3g", worst)
	}
	for _, tc := range []struct{ x, want float32 }{{-100, 0}, {0, 1}, {float32(math.Inf(-1)), 0}, {100, float32(math.Inf(1))}} {
		if got := Exp32(tc.x); got != tc.want {
			t.Errorf("Exp32(%v) = %v, want %v", tc.x, got, tc.want)
		}
	}
	if got := Exp32(float32(math.NaN())); got == got {
		t.Errorf("Exp32(NaN) = %v", got)
	}
}

// TestSoftmaxExp runs the Go loop and the AVX-512 kernel (where the CPU
// has it) on the same inputs, lengths around the groups of 16, with the
// edge cases (below the smallest exponential, above the largest, ±Inf,
// NaN) among them: the bits must agree, and agree with Exp32.
func TestSoftmaxExp(t *testing.T) {
	defer func(v bool) { expAVX512 = v }(expAVX512)
	rng := rand.New(rand.NewPCG(7, 7))
	special := []float32{-87.33654, -87.3366, -88, -100, 88.3, 88.31, 100, 0, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN())}
	for _, n := range []int{1, 15, 16, 17, 33, 129, 257} {
		x := make([]float32, n)
		m := make([]float32, n)
		for i := range x {
			x[i] = float32(rng.NormFloat64() * 30)
			m[i] = float32(rng.NormFloat64() * 10)
			if i%5 == 0 {
				x[i], m[i] = special[(i/5)%len(special)], 0
			}
		}
		sum0 := make([]float64, n)
		for i := range sum0 {
			sum0[i] = rng.Float64()
		}
		var results [][]float32
		var sums [][]float64
		for _, avx := range []bool{false, hasAVX512} {
			expAVX512 = avx
			xc, s := append([]float32(nil), x...), append([]float64(nil), sum0...)
			SoftmaxExp(xc, m, s)
			results, sums = append(results, xc), append(sums, s)
		}
		for i := range x {
			want := Exp32(x[i] - m[i])
			for p, r := range results {
				if got := r[i]; math.Float32bits(got) != math.Float32bits(want) && !(got != got && want != want) {
					t.Fatalf("n=%d path %d: exp(%v − %v) = %v, want %v", n, p, x[i], m[i], got, want)
				}
				if s, w := sums[p][i], sum0[i]+float64(want); s != w && !(s != s && w != w) {
					t.Fatalf("n=%d path %d: sum[%d] = %v, want %v", n, p, i, s, w)
				}
			}
		}
	}
}

func BenchmarkSoftmaxExp(b *testing.B) {
	rng := rand.New(rand.NewPCG(8, 8))
	x := randF32(rng, 129)
	m := make([]float32, len(x))
	sum := make([]float64, len(x))
	for _, avx := range []bool{false, hasAVX512} {
		expAVX512 = avx
		b.Run(map[bool]string{false: "go", true: "avx512"}[avx], func(b *testing.B) {
			for b.Loop() {
				for i := range x {
					x[i] = -x[i] * x[i]
				}
				SoftmaxExp(x, m, sum)
			}
		})
	}
	expAVX512 = hasAVX512
}

// TestGELU runs the Go loop and the AVX-512 kernel (where the CPU has
// it) on the same inputs, edge cases among them, and wants the same bits
// and a GELU within 2e-7·max(1, |x|) of the float64 one (the erf
// approximation is within 1.5e-7).
func TestGELU(t *testing.T) {
	defer func(v bool) { expAVX512 = v }(expAVX512)
	rng := rand.New(rand.NewPCG(9, 9))
	special := []float32{0, float32(math.Copysign(0, -1)), 13, -13, 14, -14, 100, -100, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 1e-30, -1e-30}
	for _, n := range []int{1, 15, 16, 17, 33, 1000} {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(rng.NormFloat64() * 3)
			if i%4 == 0 {
				x[i] = special[(i/4)%len(special)]
			}
		}
		var results [][]float32
		for _, avx := range []bool{false, hasAVX512} {
			expAVX512 = avx
			y := append([]float32(nil), x...)
			GELU(y)
			results = append(results, y)
		}
		for i, v := range x {
			w := 0.5 * float64(v) * (1 + math.Erf(float64(v)/math.Sqrt2))
			for p, r := range results {
				got := r[i]
				if math.Float32bits(got) != math.Float32bits(results[0][i]) && !(got != got && results[0][i] != results[0][i]) {
					t.Fatalf("n=%d path %d: GELU(%v) = %v, the Go loop %v", n, p, v, got, results[0][i])
				}
				if !math.IsInf(float64(v), 0) && v == v && math.Abs(float64(got)-w) > 2e-7*math.Max(1, math.Abs(float64(v))) {
					t.Fatalf("n=%d path %d: GELU(%v) = %v, want %v", n, p, v, got, w)
				}
			}
		}
	}
}

func BenchmarkGELU(b *testing.B) {
	rng := rand.New(rand.NewPCG(10, 10))
	x := randF32(rng, 4096)
	y := make([]float32, len(x))
	for _, avx := range []bool{false, hasAVX512} {
		expAVX512 = avx
		b.Run(map[bool]string{false: "go", true: "avx512"}[avx], func(b *testing.B) {
			for b.Loop() {
				copy(y, x)
				GELU(y)
			}
		})
	}
	expAVX512 = hasAVX512
}

// TestMaxInto runs the Go loop and the AVX-512 kernel (where the CPU
// has it) on the same inputs, NaN in either operand among them.
func TestMaxInto(t *testing.T) {
	defer func(v bool) { expAVX512 = v }(expAVX512)
	rng := rand.New(rand.NewPCG(11, 11))
	nan := float32(math.NaN())
	for _, n := range []int{1, 15, 16, 17, 129} {
		m, x := randF32(rng, n), randF32(rng, n)
		for i := 0; i < n; i += 7 {
			m[i] = nan
		}
		for i := 3; i < n; i += 5 {
			x[i] = nan
		}
		for _, avx := range []bool{false, hasAVX512} {
			expAVX512 = avx
			got := append([]float32(nil), m...)
			MaxInto(got, x)
			for i := range x {
				want := max(m[i], x[i])
				if got[i] != want && !(got[i] != got[i] && want != want) {
					t.Fatalf("n=%d avx512=%v: max(%v, %v) = %v, want %v", n, avx, m[i], x[i], got[i], want)
				}
			}
		}
	}
}

// TestSwish runs the Go loop and the AVX-512 kernel (where the CPU has
// it) on the same inputs, edge cases among them, gated and not, with
// QuickGELU's and SiLU's beta, and wants the same bits and values within
// float32 rounding of the float64 formula.
func TestSwish(t *testing.T) {
	defer func(v bool) { expAVX512 = v }(expAVX512)
	rng := rand.New(rand.NewPCG(13, 13))
	special := []float32{0, 60, -60, 100, -100, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN())}
	for _, n := range []int{1, 15, 16, 17, 100} {
		a := make([]float32, n)
		for i := range a {
			a[i] = float32(rng.NormFloat64() * 4)
			if i%3 == 0 {
				a[i] = special[(i/3)%len(special)]
			}
		}
		b := randF32(rng, n)
		for _, beta := range []float32{1.702, 1} {
			for _, gate := range [][]float32{nil, b} {
				var results [][]float32
				for _, avx := range []bool{false, hasAVX512} {
					expAVX512 = avx
					y := append([]float32(nil), a...)
					Swish(y, beta, gate)
					results = append(results, y)
				}
				for i, v := range a {
					w := float64(v) / (1 + math.Exp(-float64(beta)*float64(v)))
					if gate != nil {
						w *= float64(gate[i])
					}
					for p, r := range results {
						got := r[i]
						if math.Float32bits(got) != math.Float32bits(results[0][i]) && !(got != got && results[0][i] != results[0][i]) {
							t.Fatalf("n=%d beta=%v gated=%v path %d: Swish(%v) = %v, the Go loop %v", n, beta, gate != nil, p, v, got, results[0][i])
						}
						if !math.IsInf(float64(v), 0) && v == v && math.Abs(float64(got)-w) > 1e-6*math.Max(1, math.Abs(w)) {
							t.Fatalf("n=%d beta=%v gated=%v path %d: Swish(%v) = %v, want %v", n, beta, gate != nil, p, v, got, w)
						}
					}
				}
			}
		}
	}
}
