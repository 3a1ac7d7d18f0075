package membudget

import (
	"fmt"
	"math"
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/fields"
)

// The process-wide bound. Limit bounds each allocation alone; concurrent
// jobs and requests each within it could still together take the process
// past its memory. Every admission (Check, CheckBytes, Reserve) therefore
// also asks whether the bytes fit beside what the process's heap holds
// now and what Reserve has promised to work in flight.
var (
	processLimit atomic.Int64 // 0: DefaultProcessLimit
	mu           sync.Mutex   // reserved, and admissions against it
	reserved     int64
)

// DefaultProcessLimit is the process-wide bound when SetProcessLimit was
// not called: three quarters of the memory the process may use (the
// lowest of the machine's memory, its cgroup limit, its address-space
// limit and GOMEMLIMIT), 0 when none is known (no process-wide bound).
func DefaultProcessLimit() int64 {
	total := processMemory()
	if total <= 0 {
		return 0
	}
	return total / 4 * 3
}

// ProcessLimit returns the process-wide bound in bytes; 0: none.
func ProcessLimit() int64 {
	if l := processLimit.Load(); l > 0 {
		return l
	}
	return DefaultProcessLimit()
}

// SetProcessLimit sets the process-wide bound to n bytes; n <= 0
// restores DefaultProcessLimit. It returns the previous setting.
func SetProcessLimit(n int64) (previous int64) {
	return processLimit.Swap(max(n, 0))
}

// BusyError reports work that fits the budget alone but not beside what
// the process holds now: it is refused, not run into the memory's end;
// it may be retried when other work has finished (the service answers
// 503 with Retry-After).
type BusyError struct {
	What  string // the work, e.g. "the covariance of the features"
	Bytes int64  // what it needs
	Held  int64  // what the process holds and has promised besides
	Limit int64  // the process-wide bound
}

// Kind is fault.KindInput: the command line exits with 2, a job fails
// with the message (the service answers a request 503 itself).
func (e *BusyError) Kind() fault.Kind { return fault.KindInput }

func (e *BusyError) Error() string { return fields.Plain(e.msg()) }

// Render renders the message, spelling the setting's field with spell.
func (e *BusyError) Render(spell func(field string) string) string {
	return fields.Render(e.msg(), spell)
}

func (e *BusyError) msg() string {
	return fmt.Sprintf("%s: %s do not fit beside the %s the process holds for other work, within its memory bound of %s (three quarters of the memory it may use; the matrix memory budget {%s} bounds each piece of work); retry when other work has finished",
		e.What, FormatBytes(e.Bytes), FormatBytes(e.Held), FormatBytes(e.Limit), Field)
}

// heapBytes returns the bytes of the heap's objects, live or not yet
// swept.
func heapBytes() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(min(s[0].Value.Uint64(), math.MaxInt64))
}

// admit reports whether need bytes (and promise of them, when reserve)
// fit within the process-wide bound l beside the heap and the bytes
// promised; the caller holds mu. A first refusal collects the garbage
// and measures again: the heap's dead objects are not held.
func admit(what string, need int64, reserve bool) error {
	l := ProcessLimit()
	if l <= 0 {
		if reserve {
			reserved += need
		}
		return nil
	}
	held := heapBytes() + reserved
	if need > l-held {
		runtime.GC()
		held = heapBytes() + reserved
	}
	if need > l-held {
		return &BusyError{What: what, Bytes: need, Held: held, Limit: l}
	}
	if reserve {
		reserved += need
	}
	return nil
}

// Reserve admits work that will hold n bytes, structures of about rows ×
// cols (named in the message), until it calls release: it checks n
// against the budget (an *Error, as CheckBytes) and against the
// process-wide bound beside the heap and every other reservation (a
// *BusyError), and keeps n promised until release, so that concurrent
// work admitted in the meantime counts it. release may be called more
// than once.
func Reserve(what string, rows, cols int, n int64) (release func(), err error) {
	n = max(n, 0)
	if err := checkLimit(what, int64(max(rows, 0)), int64(max(cols, 0)), 0, uint64(n)); err != nil {
		return nil, err
	}
	mu.Lock()
	defer mu.Unlock()
	if err := admit(what, n, true); err != nil {
		return nil, err
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			mu.Lock()
			reserved -= n
			mu.Unlock()
		})
	}, nil
}
