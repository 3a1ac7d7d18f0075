package membudget

import (
	"errors"
	"strings"
	"testing"
)

// Work that fits the budget alone but not beside what the process holds
// and has promised is refused with a *BusyError naming the bound, until
// the promise is released.
func TestProcessWideBound(t *testing.T) {
	defer SetLimit(SetLimit(1 << 30))
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

// BenchmarkCheck is the cost of one admission, which every proxied
// request and every priced matrix pays.
func BenchmarkCheck(b *testing.B) {
	for b.Loop() {
		if err := Check("a small matrix", 8, 16, 16); err != nil {
			b.Fatal(err)
		}
	}
}
