package membudget

import (
	"fmt"
	"math"
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/fields"
)

// The process-wide bound. Limit bounds each allocation alone; concurrent
// jobs and requests each within it could still together take the process
// past its memory. Every admission (Check, CheckBytes, Reserve) therefore
// also asks whether the bytes fit beside what the process's heap holds
// now, what Reserve has promised to work in flight, and what the checks
// just before it admitted and the heap does not show yet; the test and
// the promise are made under one lock.
var (
	processLimit atomic.Int64 // 0: DefaultProcessLimit
	mu           sync.Mutex   // reserved, pending, and admissions against them
	reserved     int64
	pending      []promise // oldest first
	clock        = time.Now
)

// A promise is what Check admitted: need bytes, when the heap held heap.
// Check's caller allocates right after it, and until the heap shows the
// bytes (or checkGrace has passed) they are counted as promised, so that
// two checks at the same instant cannot both be admitted into the same
// room.
type promise struct {
	need, heap int64
	at         time.Time
}

// checkGrace is how long a check's bytes stay promised when the heap does
// not show them (its caller allocated less than it asked, or failed).
const checkGrace = 2 * time.Second

// minPromise is the smallest check promised: smaller ones cannot
// together matter beside the bound, and every proxied request checks a
// few, which must stay cheap.
const minPromise = 1 << 20

// maxPending bounds the promises kept; past it the oldest are forgotten.
const maxPending = 1024

// outstanding is the bytes of the promises the heap, holding h bytes now,
// does not show yet; it forgets the others. The heap's growth since the
// oldest promise is ascribed to the promises in order, each up to what it
// asked and to the growth since it was made: growth counts once, so two
// promises are not both taken as kept by one allocation. The caller
// holds mu.
func outstanding(h int64, now time.Time) int64 {
	if len(pending) == 0 {
		return 0
	}
	pool := max(0, h-pending[0].heap)
	var sum int64
	kept := pending[:0]
	for _, p := range pending {
		used := min(p.need, pool, max(0, h-p.heap))
		pool -= used
		if rest := p.need - used; rest > 0 && now.Sub(p.at) < checkGrace {
			sum += rest
			kept = append(kept, p)
		}
	}
	clear(pending[len(kept):])
	pending = kept
	return sum
}

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

// admit checks need bytes, count matrices of rows × cols (0: structures
// of about that shape), against the budget (an *Error naming them), then
// within the process-wide bound beside the heap, the bytes reserved and
// those checks promised that the heap does not show yet (a *BusyError),
// and promises them in the same hold of mu: as a reservation when
// reserve, else for the check's caller to allocate (see promise). A
// first refusal collects the garbage and measures again: the heap's dead
// objects are not held.
func admit(what string, rows, cols, count int64, need uint64, reserve bool) error {
	if budget := Limit(); need > uint64(budget) {
		return &Error{What: what, Rows: rows, Cols: cols, Count: count, Bytes: int64(min(need, math.MaxInt64)), Limit: budget}
	}
	n := int64(need)
	mu.Lock()
	defer mu.Unlock()
	l := ProcessLimit()
	if l <= 0 {
		if reserve {
			reserved += n
		}
		return nil
	}
	now := clock()
	h := heapBytes()
	held := h + reserved + outstanding(h, now)
	if n > l-held {
		runtime.GC()
		h = heapBytes()
		held = h + reserved + outstanding(h, now)
	}
	if n > l-held {
		return &BusyError{What: what, Bytes: n, Held: held, Limit: l}
	}
	switch {
	case reserve:
		reserved += n
	case n >= minPromise:
		if len(pending) == maxPending {
			pending = append(pending[:0], pending[1:]...)
		}
		pending = append(pending, promise{need: n, heap: h, at: now})
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
	if err := admit(what, int64(max(rows, 0)), int64(max(cols, 0)), 0, uint64(n), true); err != nil {
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

// Reserved returns the bytes Reserve holds for work in flight now.
func Reserved() int64 {
	mu.Lock()
	defer mu.Unlock()
	return reserved
}
