package membudget

import (
	"errors"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Work that fits the budget alone but not beside what the process holds
// and has promised is refused with a *BusyError naming the bound, until
// the promise is released.
func TestProcessWideBound(t *testing.T) {
	defer SetLimit(SetLimit(1 << 30))
	now := fakeClock(t)
	defer SetProcessLimit(SetProcessLimit(heapBytes() + 64<<20))
	rel, err := Reserve("the first", 1, 1, 40<<20)
	if err != nil {
		t.Fatalf("first reservation: %v", err)
	}
	var be *BusyError
	if _, err := Reserve("the second", 1, 1, 40<<20); !errors.As(err, &be) || be.Bytes != 40<<20 || !strings.Contains(err.Error(), "memory bound of") {
		t.Fatalf("second reservation beside the first: %v", err)
	}
	if err := Check("the covariance", 1, 2048, 2048); !errors.As(err, &be) { // 32 MiB
		t.Fatalf("a matrix beside the reservation: %v", err)
	}
	if err := Check("a small matrix", 1, 100, 100); err != nil {
		t.Fatalf("a small matrix: %v", err)
	}
	rel()
	rel() // twice releases once
	if err := Check("the covariance", 1, 2048, 2048); err != nil {
		t.Fatalf("after the release: %v", err)
	}
	// The check's caller never allocated: its promise lapses.
	*now = now.Add(checkGrace)
	rel2, err := Reserve("the second", 1, 1, 40<<20)
	if err != nil {
		t.Fatalf("second reservation after the release: %v", err)
	}
	rel2()
	// Over the budget alone: an *Error, whatever the process holds.
	var e *Error
	if _, err := Reserve("the whole", 1, 1, 2<<30); !errors.As(err, &e) {
		t.Fatalf("over the budget: %v", err)
	}
	if mu.TryLock() {
		defer mu.Unlock()
		if reserved != 0 {
			t.Errorf("%d bytes still reserved", reserved)
		}
	}
}

// The process-wide bound is three quarters of what DefaultLimit's
// sources allow.
func TestDefaultProcessLimit(t *testing.T) {
	if total := processMemory(); total > 0 && DefaultProcessLimit() != total/4*3 {
		t.Errorf("bound %d of %d", DefaultProcessLimit(), total)
	}
}

// Checks at the same instant are admitted into the room one at a time:
// of eight concurrent checks of 40 MiB with 64 MiB free, one passes (all
// did, each measuring the same heap). Once its caller has allocated, the
// heap shows the bytes and they are not counted twice; a check whose
// caller never allocates holds its bytes for checkGrace only.
func TestConcurrentChecksAdmittedOnce(t *testing.T) {
	defer SetLimit(SetLimit(1 << 30))
	now := fakeClock(t)
	runtime.GC()
	defer SetProcessLimit(SetProcessLimit(heapBytes() + 64<<20))
	const d = 2048 * 2560 // 40 MiB of float64
	var admitted atomic.Int32
	start := make(chan struct{})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			<-start
			if Check("the covariance", 1, 2048, 2560) == nil {
				admitted.Add(1)
			}
		})
	}
	close(start)
	wg.Wait()
	if n := admitted.Load(); n != 1 {
		t.Fatalf("%d of 8 concurrent checks of 40 MiB admitted into 64 MiB", n)
	}
	buf := make([]float64, d) // the admitted check's caller allocates
	if err := Check("a smaller matrix", 1, 1024, 1280); err != nil {
		t.Errorf("10 MiB beside the 40 MiB allocated: %v (counted twice?)", err)
	}
	if err := Check("the covariance", 1, 2048, 2560); err == nil {
		t.Error("40 MiB more admitted beside 40 MiB allocated and 10 MiB promised")
	}
	runtime.KeepAlive(buf)
	buf = nil
	*now = now.Add(checkGrace)
	if err := Check("the covariance", 1, 2048, 2560); err != nil {
		t.Errorf("after the allocation was dropped and the promise lapsed: %v", err)
	}
}

// fakeClock sets the package's clock to one the test moves, with no
// promises pending, until the test ends.
func fakeClock(t *testing.T) *time.Time {
	now := time.Now()
	mu.Lock()
	c := clock
	clock, pending = func() time.Time { return now }, nil
	mu.Unlock()
	t.Cleanup(func() {
		mu.Lock()
		clock, pending = c, nil
		mu.Unlock()
	})
	return &now
}

// BenchmarkCheck is the cost of one admission, which every proxied
// request and every priced matrix pays.
func BenchmarkCheck(b *testing.B) {
	for b.Loop() {
		if err := Check("a small matrix", 8, 16, 16); err != nil {
			b.Fatal(err)
		}
	}
}
