package monitor

import (
	"fmt"
	"strings"
	"time"
)

// Chunk is a run of consecutive rows of the operational data.
type Chunk struct {
	// Index is the chunk's 0-based position.
	Index int
	// Start and End delimit the rows [Start, End), 0-based.
	Start, End int
	// Period labels a time-based chunk ("2024-03-05" for a day,
	// "2024-W10" for an ISO week, "2024-03", "2024-Q1", "2024",
	// "2024-03-05T14" for an hour); it is empty for size and count
	// chunks.
	Period string
	// From and To are the first and last timestamps in a time-based
	// chunk (zero otherwise).
	From, To time.Time
}

// Rows returns the number of rows in the chunk.
func (c Chunk) Rows() int { return c.End - c.Start }

// RowError is an error about one row of the input (0-based), so that a
// caller can name the row in its message.
type RowError struct {
	Row int
	Msg string
}

func (e *RowError) Error() string { return fmt.Sprintf("monitor: row %d: %s", e.Row, e.Msg) }

// BySize cuts n rows into chunks of size rows each; the last chunk holds
// the remainder when size does not divide n (NannyML's incomplete="keep":
// a smaller chunk gets a wider band, which is honest).
func BySize(n, size int) ([]Chunk, error) {
	if size < 1 {
		return nil, fmt.Errorf("monitor: chunk size %d < 1", size)
	}
	if n < 1 {
		return nil, fmt.Errorf("monitor: no rows to chunk")
	}
	var out []Chunk
	for s := 0; s < n; s += size {
		out = append(out, Chunk{Index: len(out), Start: s, End: min(s+size, n)})
	}
	return out, nil
}

// ByCount cuts n rows into count chunks of near-equal size, the first
// n mod count chunks one row longer (as numpy.array_split). More chunks
// than rows would leave empty chunks and is an error.
func ByCount(n, count int) ([]Chunk, error) {
	if count < 1 {
		return nil, fmt.Errorf("monitor: chunk count %d < 1", count)
	}
	if n < count {
		return nil, fmt.Errorf("monitor: %d chunks of %d rows would leave %d chunks empty", count, n, count-n)
	}
	out := make([]Chunk, count)
	base, extra := n/count, n%count
	s := 0
	for i := range out {
		size := base
		if i < extra {
			size++
		}
		out[i] = Chunk{Index: i, Start: s, End: s + size}
		s += size
	}
	return out, nil
}

// Period is a calendar period for time-based chunks.
type Period string

// The periods ByPeriod knows.
const (
	Hour    Period = "hour"
	Day     Period = "day"
	Week    Period = "week" // ISO 8601 weeks, starting on Monday
	Month   Period = "month"
	Quarter Period = "quarter"
	Year    Period = "year"
)

// ParsePeriod accepts the period names and pandas' offset aliases
// (h, d, w, m, q, y), in any case.
func ParsePeriod(s string) (Period, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "hour", "h":
		return Hour, nil
	case "day", "d":
		return Day, nil
	case "week", "w":
		return Week, nil
	case "month", "m":
		return Month, nil
	case "quarter", "q":
		return Quarter, nil
	case "year", "y":
		return Year, nil
	}
	return "", fmt.Errorf("monitor: unknown period %q (want hour, day, week, month, quarter or year)", s)
}

// Label returns the name of the period that contains t, in t's location.
func (p Period) Label(t time.Time) string {
	switch p {
	case Hour:
		return t.Format("2006-01-02T15")
	case Day:
		return t.Format("2006-01-02")
	case Week:
		y, w := t.ISOWeek()
		return fmt.Sprintf("%04d-W%02d", y, w)
	case Month:
		return t.Format("2006-01")
	case Quarter:
		return fmt.Sprintf("%04d-Q%d", t.Year(), (int(t.Month())-1)/3+1)
	case Year:
		return t.Format("2006")
	}
	return ""
}

// ByPeriod cuts rows with the given timestamps into one chunk per
// calendar period that holds rows. The timestamps must be in
// non-decreasing order (production logs are), so that chunks are runs of
// rows; a row earlier than its predecessor is a *RowError. Periods
// without rows produce no chunk.
func ByPeriod(times []time.Time, p Period) ([]Chunk, error) {
	if _, err := ParsePeriod(string(p)); err != nil {
		return nil, err
	}
	if len(times) == 0 {
		return nil, fmt.Errorf("monitor: no rows to chunk")
	}
	var out []Chunk
	cur := Chunk{Start: 0, Period: p.Label(times[0]), From: times[0], To: times[0]}
	for i := 1; i < len(times); i++ {
		if times[i].Before(times[i-1]) {
			return nil, &RowError{Row: i, Msg: fmt.Sprintf("timestamp %s is earlier than the previous row's %s (rows must be in time order)",
				times[i].Format(time.RFC3339), times[i-1].Format(time.RFC3339))}
		}
		if l := p.Label(times[i]); l != cur.Period {
			cur.End = i
			out = append(out, cur)
			cur = Chunk{Index: len(out), Start: i, Period: l, From: times[i]}
		}
		cur.To = times[i]
	}
	cur.End = len(times)
	return append(out, cur), nil
}
