package linalg

import "sync"

// backend names the BLAS implementation in use; simd.go and openblas.go
// override it.
var backend = "gonum (pure Go)"

// fastSyrk reports that the installed BLAS is blocked and parallel in
// level 3, DSYRK included, and has a fast DSYMV (internal/simdblas or
// OpenBLAS); see Tuned.
var fastSyrk = false

// Tuned reports whether the installed BLAS has blocked, multi-threaded
// level-3 routines (DGEMM, DSYRK, DSYR2K) and a vectorised DSYMV:
// internal/simdblas in the default build on AVX2/FMA CPUs, or OpenBLAS.
// Callers then take the routes that suit such a BLAS (a SYRK rather than
// GEMM strips, a symmetric eigensolve rather than an SVD); with gonum's
// own BLAS (GENLENS_SIMD=off, other CPUs) the routes that suit it.
func Tuned() bool { return fastSyrk }

// Backend reports which BLAS/LAPACK implementation this binary uses.
func Backend() string { return backend }

// setThreads does nothing in the pure-Go build; openblas.go
// replaces it with the real OpenBLAS control.
var setThreads = func(n int) (prev int) { return 0 }

// SetThreads sets the number of threads one BLAS call may use and returns
// the previous setting, so that callers can restore it. It matters only
// with -tags openblas: OpenBLAS splits even small products across all
// cores and its threads spin while they wait, which costs several times
// the work when the caller already runs many small problems in parallel
// goroutines (simulation trials, concurrent tasks). Such callers set 1 for
// the duration. n < 1 means one thread per core. In the pure-Go build it
// sets the goroutines of one internal/simdblas call (whose results do not
// depend on it); with gonum's own BLAS it does nothing and returns 0
// (gonum's parallelism is not adjustable).
//
// The setting is process-wide: change it before starting concurrent work,
// not while other goroutines are inside BLAS calls.
func SetThreads(n int) (prev int) { return setThreads(n) }

var (
	singleMu   sync.Mutex
	singleHeld int // leases outstanding
	singlePrev int // thread setting before the first lease
)

// SingleThreaded holds BLAS to one thread per call until every caller
// that asked for it has called its release function. Code that fans work
// out over goroutines (internal/par does, for every fan-out in genlens)
// takes such a lease: with OpenBLAS each small product would otherwise
// also spread over every core, and its threads spin against the
// goroutines (4x slower seen on 2 cores). Leases are counted, so two
// concurrent jobs in one process do not undo each other's setting; the
// previous setting returns when the last lease is released.
func SingleThreaded() (release func()) {
	singleMu.Lock()
	if singleHeld == 0 {
		singlePrev = setThreads(1)
	}
	singleHeld++
	singleMu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			singleMu.Lock()
			singleHeld--
			if singleHeld == 0 {
				setThreads(singlePrev)
			}
			singleMu.Unlock()
		})
	}
}
