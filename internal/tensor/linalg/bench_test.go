package linalg

import (
	"math/rand/v2"
	"syscall"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// The benchmarks below run on whatever backend this binary installed
// (Backend): compare the default build, GENLENS_SIMD=off and -tags
// openblas in one session. They report GFLOP/s of wall time and the CPU
// seconds per operation: on a shared machine the wall clock measures the
// neighbours too, the CPU time does not.

func randSlice(n int, seed uint64) []float64 {
	r := rand.New(rand.NewPCG(seed, 1))
	x := make([]float64, n)
	for i := range x {
		x[i] = r.Float64()*2 - 1
	}
	return x
}

// report adds GFLOP/s (when flops > 0) and CPU seconds per operation,
// given the process's CPU seconds when the timed loop started.
func report(b *testing.B, flops, cpu0 float64) {
	if flops > 0 {
		b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	}
	b.ReportMetric((cpuSeconds()-cpu0)/float64(b.N), "cpu-s/op")
}

func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime)
}

// BenchmarkDgemm4096x4096x2048 is C = A·B with A 4096×2048, B 2048×4096.
func BenchmarkDgemm4096x4096x2048(b *testing.B) {
	const m, n, k = 4096, 4096, 2048
	a, bb, c := randSlice(m*k, 1), randSlice(k*n, 2), make([]float64, m*n)
	b.Logf("backend: %s", Backend())
	b.ResetTimer()
	cpu0 := cpuSeconds()
	for b.Loop() {
		blas64.Implementation().Dgemm(blas.NoTrans, blas.NoTrans, m, n, k, 1, a, k, bb, n, 0, c, n)
	}
	report(b, 2*m*n*k, cpu0)
}

// BenchmarkSgemm4096x4096x2048 is the same product in float32.
func BenchmarkSgemm4096x4096x2048(b *testing.B) {
	const m, n, k = 4096, 4096, 2048
	a, bb := randF32(rand.New(rand.NewPCG(1, 1)), m*k), randF32(rand.New(rand.NewPCG(2, 1)), k*n)
	c := make([]float32, m*n)
	b.Logf("backend: %s", Backend())
	b.ResetTimer()
	cpu0 := cpuSeconds()
	for b.Loop() {
		blas32.Implementation().Sgemm(blas.NoTrans, blas.NoTrans, m, n, k, 1, a, k, bb, n, 0, c, n)
	}
	report(b, 2*m*n*k, cpu0)
}

// BenchmarkDsyrk2048x10000 is the scatter matrix of 10,000 centred
// 2048-d rows, XᵀX (upper triangle), as frechet's statistics compute it.
func BenchmarkDsyrk2048x10000(b *testing.B) {
	const n, k = 2048, 10000
	a, c := randSlice(k*n, 3), make([]float64, n*n)
	b.Logf("backend: %s", Backend())
	b.ResetTimer()
	cpu0 := cpuSeconds()
	for b.Loop() {
		blas64.Implementation().Dsyrk(blas.Upper, blas.Trans, n, k, 1, a, n, 0, c, n)
	}
	report(b, float64(n)*float64(n+1)*k, cpu0)
}

// BenchmarkEigenSymValues2048 is a values-only symmetric eigensolve at
// d = 2048 (LAPACK dsyev: tridiagonalisation, then dsterf).
func BenchmarkEigenSymValues2048(b *testing.B) {
	const d = 2048
	x := mat.NewDense(d, d, randSlice(d*d, 4))
	s := mat.NewSymDense(d, nil)
	s.SymOuterK(1, x)
	b.Logf("backend: %s", Backend())
	b.ResetTimer()
	cpu0 := cpuSeconds()
	for b.Loop() {
		var es mat.EigenSym
		if !es.Factorize(s, false) {
			b.Fatal("no convergence")
		}
	}
	report(b, 0, cpu0)
}
