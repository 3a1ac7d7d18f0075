package records

import (
	"fmt"
	"math"
	"time"
)

// The records of the monitors: a deployed regression model watched chunk
// by chunk (package monitorsvc), its rows, their labels, and what chunk
// computation reads of them.

// Monitor is a deployed regression model watched chunk by chunk with its
// check model (the JSON file of `genlens mse fit`).
type Monitor struct {
	ID    int64
	Name  string
	Model []byte // the check model file, as given
	// Exactly one of ChunkSize (rows per chunk) and Period (hour, day,
	// ...; rows chunked by their timestamps) is set.
	ChunkSize int
	Period    string
	Created   time.Time
	// Rows and Labelled count the monitor's rows and those with a target
	// (filled by Monitor and Monitors).
	Rows, Labelled int
}

// Row is one operational row of a monitor.
type Row struct {
	ID   string
	Time time.Time // zero when the row has no timestamp
	// Features in the model's feature order, and the deployed model's
	// prediction f(x).
	Features   []float64
	Prediction float64
	// Estimate is the row's contribution to the estimated MSE,
	// 2 (h(x) - f(x))², computed once at ingest.
	Estimate float64
}

// The times a row's timestamp may take: the store keeps them as int64
// Unix nanoseconds, which hold 1677-09-21T00:12:43.145224192Z to
// 2262-04-11T23:47:16.854775807Z exactly. A later time would wrap around
// (2300 would come back as 1715), and the zero time means "none".
var (
	MinTime = time.Unix(0, math.MinInt64).UTC()
	MaxTime = time.Unix(0, math.MaxInt64).UTC()
)

// TimeStorable reports whether t is stored and read back exactly.
func TimeStorable(t time.Time) bool { return !t.Before(MinTime) && !t.After(MaxTime) }

// DuplicateError reports a row whose id the monitor holds already; no
// row of its batch was stored.
type DuplicateError struct {
	Index int // 0-based position in the batch
	ID    string
}

func (e *DuplicateError) Error() string {
	return fmt.Sprintf("rows[%d]: row id %q is stored already", e.Index, e.ID)
}

// Label is the target of a row, arrived after its prediction.
type Label struct {
	ID     string
	Target float64
}

// UnknownRowError reports a label for a row id the monitor does not
// hold; no label of its batch was stored.
type UnknownRowError struct {
	Index int // 0-based position in the batch
	ID    string
}

func (e *UnknownRowError) Error() string {
	return fmt.Sprintf("labels[%d]: no row with id %q", e.Index, e.ID)
}

// Series is what chunk computation needs of a monitor's rows, in chunk
// order.
type Series struct {
	Estimates []float64   // per-row estimates 2 (h(x) - f(x))²
	Realized  []float64   // per-row (y - f(x))², NaN until the label arrives
	Times     []time.Time // timestamps (zero when none), when asked for by time
	// Features are the rows' features in the model's order, and Stamps
	// their timestamps (zero when none) whatever the order.
	Features [][]float64
	Stamps   []time.Time
}
