package par

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/tensor/linalg"
)

// PanicError is the error For returns when a worker panicked: the value
// it panicked with and the stack of the goroutine where it happened.
type PanicError struct {
	Index int // the index of the work that panicked
	Value any
	Stack []byte
}

// Kind is fault.KindInternal, whatever the value wraps.
func (e *PanicError) Kind() fault.Kind { return fault.KindInternal }

func (e *PanicError) Error() string {
	return fmt.Sprintf("internal error in worker %d: %v", e.Index, e.Value)
}

// Workers returns the number of goroutines For uses for n pieces of work
// when asked for w: w itself when positive, else one per CPU; never more
// than n.
func Workers(w, n int) int {
	if w <= 0 {
		w = runtime.GOMAXPROCS(0)
	}
	return max(1, min(w, n))
}

// For calls fn(ctx, i) for i in [0, n) on up to workers goroutines
// (workers <= 0: one per CPU) and returns the first error, after all
// started calls have returned. Once one call fails or ctx is done, no
// further index is started and the context passed to the running calls is
// cancelled, so long calls should watch it. A panic in fn becomes a
// *PanicError. When more than one goroutine runs, BLAS is held to one
// thread for the duration (see linalg.SingleThreaded).
func For(ctx context.Context, n, workers int, fn func(ctx context.Context, i int) error) error {
	if n <= 0 {
		return ctx.Err()
	}
	w := Workers(workers, n)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if w > 1 {
		defer linalg.SingleThreaded()()
	}
	var (
		next     atomic.Int64
		once     sync.Once
		firstErr error
		wg       sync.WaitGroup
	)
	fail := func(err error) {
		once.Do(func() { firstErr = err; cancel() })
	}
	work := func() {
		defer wg.Done()
		for {
			if ctx.Err() != nil {
				return
			}
			i := int(next.Add(1) - 1)
			if i >= n {
				return
			}
			if err := call(ctx, i, fn); err != nil {
				fail(err)
				return
			}
		}
	}
	wg.Add(w)
	for k := 0; k < w-1; k++ {
		go work()
	}
	work()
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	return ctx.Err()
}

func call(ctx context.Context, i int, fn func(context.Context, int) error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &PanicError{Index: i, Value: r, Stack: debug.Stack()}
		}
	}()
	return fn(ctx, i)
}

// Mix derives a 64-bit seed from a base seed and any number of keys
// (trial, generator, task indices) with the SplitMix64 finaliser, so that
// neighbouring keys give unrelated streams and the same keys always give
// the same seed.
func Mix(base uint64, keys ...uint64) uint64 {
	z := splitmix(base)
	for _, k := range keys {
		z = splitmix(z ^ splitmix(k+0x9e3779b97f4a7c15))
	}
	return z
}

func splitmix(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
