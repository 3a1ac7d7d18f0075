package par

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

func TestForRunsEveryIndexOnce(t *testing.T) {
	for _, workers := range []int{0, 1, 2, 7, 100} {
		const n = 1000
		var seen [n]atomic.Int32
		if err := For(context.Background(), n, workers, func(_ context.Context, i int) error {
			seen[i].Add(1)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		for i := range seen {
			if c := seen[i].Load(); c != 1 {
				t.Fatalf("workers=%d: index %d ran %d times", workers, i, c)
			}
		}
	}
}

// A panicking worker becomes an error naming the index; the process and
// the other workers survive.
func TestForPanicBecomesError(t *testing.T) {
	err := For(context.Background(), 50, 4, func(_ context.Context, i int) error {
		if i == 17 {
			var m map[string]int
			//lint:ignore SA5000 a nil map write: the runtime panic under test
			m["boom"] = 1
		}
		return nil
	})
	var pe *PanicError
	if !errors.As(err, &pe) {
		t.Fatalf("got %v, want a *PanicError", err)
	}
	if pe.Index != 17 || len(pe.Stack) == 0 {
		t.Errorf("PanicError{Index: %d, stack %d bytes}", pe.Index, len(pe.Stack))
	}
}

func TestForFirstErrorStopsNewWork(t *testing.T) {
	boom := errors.New("boom")
	var started atomic.Int32
	err := For(context.Background(), 10000, 2, func(_ context.Context, i int) error {
		started.Add(1)
		if i == 3 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) {
		t.Fatalf("got %v, want boom", err)
	}
	if s := started.Load(); s > 100 {
		t.Errorf("%d calls started after the error at index 3", s)
	}
}

func TestForCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	start := time.Now()
	err := For(ctx, 1<<30, 2, func(ctx context.Context, i int) error {
		time.Sleep(time.Millisecond)
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("cancel took %v", d)
	}
}

func TestMix(t *testing.T) {
	seen := map[uint64]bool{}
	for base := uint64(0); base < 4; base++ {
		for k := uint64(0); k < 64; k++ {
			s := Mix(base, k)
			if seen[s] {
				t.Fatalf("Mix(%d, %d) repeats a seed", base, k)
			}
			seen[s] = true
		}
	}
	if first, again := Mix(1, 2, 3), Mix(1, 2, 3); first != again || first == Mix(1, 3, 2) {
		t.Error("Mix must be deterministic and order-sensitive")
	}
	if Mix(5) == Mix(5, 0) {
		t.Error("a key of 0 must change the seed")
	}
}
