package linalg

import "sync"

// backend names the BLAS implementation in use; simd.go and openblas.go
// override it.
var backend = "gonum (pure Go)"

// fastSyrk reports that the installed Dsyrk is blocked and parallel
// (internal/simdblas or OpenBLAS), so AddGram calls it directly.
var fastSyrk = false

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
