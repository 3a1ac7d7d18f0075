package membudget

import (
	"bufio"
	"fmt"
	"math"
	"math/bits"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/fields"
)

// Field is the request field of the budget, in MiB: the command line's
// flag and the service's setting of that name set it through SetLimit.
const Field = "matrix_budget_mb"

// MaxDefault is the largest default budget: 4 GiB holds a 23,170 × 23,170
// float64 matrix, the Gram matrix of 23,170 examples or the covariance of
// as many features.
const MaxDefault int64 = 4 << 30

// minDefault keeps the default useful on a machine that reports little
// memory: 256 MiB holds the 2048 × 2048 covariance of Inception features
// 16 times over.
const minDefault int64 = 256 << 20

var limit atomic.Int64

// DefaultLimit is the budget when SetLimit was not called: a quarter of
// the memory the process may use (the machine's physical memory, or a
// lower cgroup limit of its container, address-space limit (ulimit -v,
// prlimit --as) or GOMEMLIMIT), between
// 256 MiB and MaxDefault.
func DefaultLimit() int64 {
	total := processMemory()
	if total <= 0 {
		return MaxDefault
	}
	return min(MaxDefault, max(minDefault, total/4))
}

// processMemory returns the memory the process may use: the machine's,
// or the lower of its cgroup limit, its address-space limit and
// GOMEMLIMIT; 0 when none is known.
func processMemory() int64 {
	total := machineMemory()
	if soft := debug.SetMemoryLimit(-1); soft > 0 && soft < math.MaxInt64 && (total <= 0 || soft < total) {
		total = soft
	}
	return max(total, 0)
}

// machineMemory is the lowest of the machine's memory, the cgroup limit
// and the address-space limit, read once: every admission asks for it
// (each proxied request, each matrix), and the files behind it do not
// change under a running process. GOMEMLIMIT, which the process itself
// may change, is read on every call.
var machineMemory = sync.OnceValue(func() int64 {
	total := physicalMemory()
	if c := cgroupLimit(); c > 0 && (total <= 0 || c < total) {
		total = c
	}
	if as := addressSpaceLimit(); as > 0 && (total <= 0 || as < total) {
		total = as
	}
	return total
})

// physicalMemory returns the machine's memory in bytes from
// /proc/meminfo, 0 where it cannot be read (not Linux).
func physicalMemory() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// MemTotal:       24522072 kB
		if rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
			v, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil || v <= 0 || v > math.MaxInt64>>10 {
				return 0
			}
			return v << 10
		}
	}
	return 0
}

// cgroupLimit returns the memory limit of the process's cgroup (v2's
// memory.max, v1's memory.limit_in_bytes), 0 when there is none.
func cgroupLimit() int64 {
	for _, p := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err == nil && v > 0 && v < 1<<60 { // "max", or v1's unlimited 2^63 - 4096
			return v
		}
	}
	return 0
}

// Limit returns the budget in bytes.
func Limit() int64 {
	if l := limit.Load(); l > 0 {
		return l
	}
	return DefaultLimit()
}

// SetLimit sets the budget to n bytes for the whole process; n <= 0
// restores DefaultLimit. It returns the previous setting (0 for the
// default), so that a test can restore it.
func SetLimit(n int64) (previous int64) {
	return limit.Swap(max(n, 0))
}

// Error reports a matrix over the budget.
type Error struct {
	What       string // the matrix, e.g. "the covariance of the features"
	Rows, Cols int64  // its shape
	Count      int64  // how many matrices of that shape; 0 from CheckBytes (structures of about that shape)
	Bytes      int64  // what it needs; math.MaxInt64 when that overflows
	Limit      int64  // the budget
}

// Kind is fault.KindInput: an input whose shape asks for a matrix over
// the budget is too large for this process.
func (e *Error) Kind() fault.Kind { return fault.KindInput }

// Error renders the message with the setting's field name.
func (e *Error) Error() string { return fields.Plain(e.msg()) }

// Render renders the message, spelling the setting's field with spell.
func (e *Error) Render(spell func(field string) string) string {
	return fields.Render(e.msg(), spell)
}

func (e *Error) msg() string {
	shape := fmt.Sprintf("a %d × %d matrix takes", e.Rows, e.Cols)
	switch {
	case e.Count == 0: // CheckBytes: several structures of about this shape
		shape = fmt.Sprintf("matrices of %d × %d take", e.Rows, e.Cols)
	case e.Count > 1:
		shape = fmt.Sprintf("%d matrices of %d × %d take", e.Count, e.Rows, e.Cols)
	}
	need := "more than 8 EiB"
	if e.Bytes < math.MaxInt64 {
		need = FormatBytes(e.Bytes)
	}
	return fmt.Sprintf("%s: %s %s, over the matrix memory budget of %s; use fewer rows or dimensions, or raise {%s} (MiB) on a machine with the memory",
		e.What, shape, need, FormatBytes(e.Limit), Field)
}

// Check returns an *Error when count float64 matrices of rows × cols (a
// symmetric one counted full) need more bytes than the budget, nil when
// they fit. what names the matrix for the message: "the covariance of
// the features". Negative sizes count as 0.
func Check(what string, count, rows, cols int) error {
	r, c, k := uint64(max(rows, 0)), uint64(max(cols, 0)), uint64(max(count, 0))
	return admit(what, int64(r), int64(c), int64(k), mul(mul(mul(r, c), k), 8), false)
}

// CheckBytes is Check for a structure already counted in bytes: rows ×
// cols names its shape in the message, bytes is what it needs in all.
func CheckBytes(what string, rows, cols int, bytes int64) error {
	return admit(what, int64(max(rows, 0)), int64(max(cols, 0)), 0, uint64(max(bytes, 0)), false)
}

// mul multiplies, saturating at the largest uint64 instead of wrapping.
func mul(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	if hi != 0 {
		return math.MaxUint64
	}
	return lo
}

// FormatBytes renders n bytes for a message in binary units, to one
// decimal: "6.7 GiB", "512 MiB", "12 KiB".
func FormatBytes(n int64) string {
	unit := func(div float64, name string) string {
		return strings.TrimSuffix(strconv.FormatFloat(float64(n)/div, 'f', 1, 64), ".0") + " " + name
	}
	switch {
	case n >= 1<<30:
		return unit(1<<30, "GiB")
	case n >= 1<<20:
		return unit(1<<20, "MiB")
	case n >= 1<<10:
		return unit(1<<10, "KiB")
	}
	return strconv.FormatInt(n, 10) + " bytes"
}
