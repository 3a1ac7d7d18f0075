package monitorsvc

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/store/records"
	"github.com/genlens/genlens/internal/tensor/membudget"
	"github.com/genlens/genlens/metric/checkmodel"
	"github.com/genlens/genlens/metric/monitor"
)

// Store keeps the monitors, their rows and labels; package store's DB
// is one. Monitor and DeleteMonitor of an unknown id, and InsertRows or
// SetLabels on one, return records.ErrNotFound; CreateMonitor of a taken
// name records.ErrConflict; InsertRows a *records.DuplicateError and
// SetLabels a *records.UnknownRowError for a batch they refuse whole.
type Store interface {
	CreateMonitor(ctx context.Context, m *records.Monitor) error
	Monitor(ctx context.Context, id int64) (*records.Monitor, error)
	Monitors(ctx context.Context) ([]records.Monitor, error)
	// Counts fills m's Rows and Labelled.
	Counts(ctx context.Context, m *records.Monitor) error
	DeleteMonitor(ctx context.Context, id int64) error
	InsertRows(ctx context.Context, monitor int64, rows []records.Row) error
	SetLabels(ctx context.Context, monitor int64, labels []records.Label) error
	// Series returns the rows in chunk order: by timestamp (then
	// arrival) when byTime, else by arrival.
	Series(ctx context.Context, monitor int64, byTime bool) (*records.Series, error)
	// LastChunks returns the row count and the rows of the last k chunks
	// of size, with the features of the last withFeatures of them.
	LastChunks(ctx context.Context, monitor int64, size, k, withFeatures int) (int, *records.Series, error)
	// SeriesPage returns the row count and the rows [from, to) that
	// span picks from it, with their features; by time, every row's
	// estimate, realised value and time besides (see store.DB).
	SeriesPage(ctx context.Context, monitor int64, byTime bool, span func(n int, times []time.Time) (from, to int, err error)) (int, *records.Series, error)
}

// Service evaluates monitors over a Store, whose methods it exposes, and
// caches their decoded check models.
type Service struct {
	Store
	now    func() time.Time
	models sync.Map // ModelKey → *checkmodel.Model
}

// New returns a Service over st; now decides whether the last period
// chunk is complete (nil: time.Now).
func New(st Store, now func() time.Time) *Service {
	if now == nil {
		now = time.Now
	}
	return &Service{Store: st, now: now}
}

// ModelKey identifies a monitor's check model in the cache: its id and
// creation time. Ids are never reused, but a replica keeps the entry of
// a monitor another replica deleted, and a database that reused an id
// before it was migrated must not meet that entry under the new monitor.
type ModelKey struct {
	id      int64
	created int64 // Unix nanoseconds
}

// KeyOf is the cache key of m's model; callers keep their own per
// monitor state (a logged failure) under it.
func KeyOf(m *records.Monitor) ModelKey {
	return ModelKey{id: m.ID, created: m.Created.UnixNano()}
}

// Model returns the decoded check model of m, cached: a monitor's model
// never changes after creation, so every replica may cache it.
func (s *Service) Model(m *records.Monitor) (*checkmodel.Model, error) {
	key := KeyOf(m)
	if v, ok := s.models.Load(key); ok {
		return v.(*checkmodel.Model), nil
	}
	cm, err := checkmodel.DecodeModel("model", m.Model)
	if err != nil {
		return nil, fmt.Errorf("monitor %d: %w: %w", m.ID, ErrStoredModel, err)
	}
	s.models.Store(key, cm)
	return cm, nil
}

// ErrStoredModel marks a monitor whose stored model file no longer
// decodes (one this version refuses, such as a model reading a column
// twice): its own requests fail with the reason, while the lists and the
// dashboard show it with the reason as a note instead of failing whole.
var ErrStoredModel = errors.New("stored model")

// CacheModel keeps cm as the decoded model of m, just created.
func (s *Service) CacheModel(m *records.Monitor, cm *checkmodel.Model) { s.models.Store(KeyOf(m), cm) }

// ForgetModel drops the cached model of m, just deleted.
func (s *Service) ForgetModel(m *records.Monitor) { s.models.Delete(KeyOf(m)) }

// View is a monitor's chunks as package monitor evaluated them.
type View struct {
	Rows     int
	Chunks   []monitor.Result
	Complete []bool
	Th       monitor.Thresholds
	RefRows  int // rows per reference chunk behind the thresholds
	// Total is the number of chunks, of which Chunks holds the last.
	Total int
	// Drift is the model's drift model (nil for a model file without
	// one) and DriftTh the reconstruction error's thresholds.
	Drift   *monitor.DriftModel
	DriftTh monitor.Thresholds
}

// RecentChunks is how many of the latest complete chunks the summary,
// the dashboard and /metrics count alerts over.
const RecentChunks = 10

// Chunks cuts the monitor's rows into chunks and evaluates them with the
// monitoring pipeline (monitor.Run), as `mse estimate` does: thresholds
// from the model's reference squared errors in chunks of the same size,
// extrapolation and drift from its drift model.
//
// With last > 0 and a monitor that chunks by size, only the last chunks
// are read (Store.LastChunks), with the features of the last drift of
// them; of a period monitor, every row's time and estimate (its
// thresholds depend on every chunk's size) and the features of the last
// chunks. Either way the features are priced against the memory budget,
// and where fewer chunks fit, fewer are evaluated. For a chunk-size
// monitor the thresholds use the nominal size, so they do not move while
// the last chunk fills. The last
// chunk is incomplete when it holds fewer rows than the chunk size, or,
// by period, while the service's clock is still inside its period.
func (s *Service) Chunks(ctx context.Context, m records.Monitor, last, drift int) (*View, error) {
	cm, err := s.Model(&m)
	if err != nil {
		return nil, err
	}
	byTime := m.Period != ""
	if last > 0 && byTime {
		// The latest chunks' features only, priced: every row's time and
		// estimate is read (the chunks and their thresholds depend on
		// them all), the features of the latest chunks that fit.
		return s.page(ctx, m, func(n int) (int, int) { return max(0, n-last), n }, true)
	}
	var ser *records.Series
	n, offset := 0, 0
	if last > 0 && !byTime {
		// Features for the last drift chunks only. A chunk's alert
		// depends on whether it is extrapolating (monitor.Run), so a
		// caller counting alerts over chunks asks for their drift too.
		var release func()
		last, drift, release, err = s.priceDrift(m, cm, last, drift)
		if err != nil {
			return nil, err
		}
		defer release()
		n, ser, err = s.LastChunks(ctx, m.ID, m.ChunkSize, last, drift)
		if err == nil {
			offset = n - len(ser.Estimates)
		}
	} else {
		ser, err = s.Series(ctx, m.ID, byTime)
		if ser != nil {
			n = len(ser.Estimates)
		}
	}
	if err != nil {
		return nil, err
	}
	v := &View{Rows: n, Drift: cm.Drift}
	in := monitor.Input{Estimates: ser.Estimates, Realized: ser.Realized, Reference: cm.Reference.SquaredErrors,
		HeldOut: cm.Reference.HeldOutEstimates, ChunkSize: m.ChunkSize, NonNegative: true}
	if cm.Drift != nil {
		in.Drift, in.Features = cm.Drift, ser.Features
	}
	driftFrom := func(chunks int) {
		if last > 0 && !byTime {
			in.DriftFrom = max(0, chunks-drift)
		}
	}
	switch {
	case len(ser.Estimates) == 0 && m.ChunkSize == 0:
		v.Th = monitor.ReferenceThresholds(nil, monitor.DefaultWidth, true)
		v.DriftTh = v.Th
		return v, nil
	case len(ser.Estimates) == 0:
	case byTime:
		p := monitor.Period(m.Period)
		in.Chunks, err = monitor.ByPeriod(ser.Times, p)
		if err != nil {
			return nil, err // rows are sorted by time: cannot fail
		}
		v.Complete = make([]bool, len(in.Chunks))
		for i := range in.Chunks {
			v.Complete[i] = true
		}
		last := in.Chunks[len(in.Chunks)-1]
		v.Complete[len(in.Chunks)-1] = p.Label(s.now().UTC()) > last.Period
	default:
		in.Chunks, err = monitor.BySize(len(ser.Estimates), m.ChunkSize)
		if err != nil {
			return nil, err
		}
		v.Complete = make([]bool, len(in.Chunks))
		for i, c := range in.Chunks {
			v.Complete[i] = c.Rows() == m.ChunkSize
		}
		driftFrom(len(in.Chunks))
	}
	rep, err := monitor.Run(in)
	if err != nil {
		return nil, err
	}
	v.Chunks, v.Th, v.RefRows, v.DriftTh = rep.Results, rep.Thresholds, rep.ReferenceRows, rep.DriftThresholds
	for i := range v.Chunks {
		c := &v.Chunks[i]
		if !byTime {
			// Rows chunked by arrival may carry timestamps: the chunk
			// spans those of its first and last rows.
			if t := ser.Stamps[c.Start]; !t.IsZero() {
				c.From = t
			}
			if t := ser.Stamps[c.End-1]; !t.IsZero() {
				c.To = t
			}
		}
		c.Index += offset / max(1, m.ChunkSize)
		c.Start += offset
		c.End += offset
	}
	v.Total = len(v.Chunks)
	if len(v.Chunks) > 0 {
		v.Total = v.Chunks[len(v.Chunks)-1].Index + 1
	}
	return v, nil
}

// priceDrift prices the features of the last drift chunks of a
// chunk-size monitor (pagePrice: chunk size × features × 8 bytes each,
// and what each feature's drift takes to answer) against the
// memory budget and holds them until release, as Page does for a page's
// rows. Where fewer chunks fit than asked for, fewer are read, and last
// shrinks with drift: a chunk's alert depends on its extrapolation, so a
// chunk read without its features would be judged as if in support (the
// summary then counts alerts over the chunks it read, and says how
// many). When not even one chunk fits, the error names the chunk size.
func (s *Service) priceDrift(m records.Monitor, cm *checkmodel.Model, last, drift int) (int, int, func(), error) {
	features := len(cm.Columns.Features)
	if cm.Drift == nil || drift <= 0 || features == 0 || m.ChunkSize <= 0 {
		return last, drift, func() {}, nil
	}
	per := pagePrice(cm, 1, m.ChunkSize)
	if fit := membudget.Limit() / per; fit < int64(drift) {
		if fit < 1 {
			return 0, 0, nil, &membudget.Error{What: "the features of the monitor's latest chunk, to evaluate its drift",
				Rows: int64(m.ChunkSize), Cols: int64(features), Count: 1, Bytes: per, Limit: membudget.Limit()}
		}
		last, drift = min(last, int(fit)), int(fit)
	}
	release, err := membudget.Reserve("the features of the monitor's latest chunks", drift*m.ChunkSize, features, int64(drift)*per)
	if err != nil {
		return 0, 0, nil, err
	}
	return last, drift, release, nil
}

// Summary says what a monitor's chunks amount to now: its latest
// complete chunk (the incomplete last one, which usually holds few rows,
// must not stand for the monitor), how many of the latest complete chunks
// alerted, and the incomplete chunk, if any.
type Summary struct {
	Latest, Incomplete   *monitor.Result // nil when there is none
	Recent, RecentAlerts int             // over up to RecentChunks latest complete chunks
}

// Summary is what v amounts to now.
func (v *View) Summary() Summary {
	var s Summary
	for i := len(v.Chunks) - 1; i >= 0; i-- {
		c := &v.Chunks[i]
		if !v.Complete[i] {
			if i == len(v.Chunks)-1 {
				s.Incomplete = c
			}
			continue
		}
		if s.Latest == nil {
			s.Latest = c
		}
		if s.Recent < RecentChunks {
			s.Recent++
			if c.Alert {
				s.RecentAlerts++
			}
		}
	}
	return s
}

// ChunkFeatureBytes is what evaluating and answering a page costs for
// each feature of each chunk, beside its rows' features (8 bytes each):
// the feature's drift (its Kolmogorov-Smirnov statistic and p-value),
// its entry in the chunk's view and its JSON. Measured at 820-1,060
// bytes allocated on pages of 100 and 400 chunks of 50 and 200
// features; a page of 10,000 chunks of 4,000 features, which killed the
// service, takes 41 GB at that price.
const ChunkFeatureBytes = 1024

// pagePrice is the memory a page of chunks holding rows rows costs:
// their features, 8 bytes each, and, with a drift model, ChunkFeatureBytes
// for each feature of each chunk.
func pagePrice(cm *checkmodel.Model, chunks, rows int) int64 {
	features := int64(len(cm.Columns.Features))
	p := int64(rows) * features * 8
	if cm.Drift != nil {
		p += int64(chunks) * features * ChunkFeatureBytes
	}
	return p
}

// PageCostError reports a page of chunks whose rows' features take more
// memory than the budget (package membudget): the caller asks for fewer
// chunks at once (the request's limit).
type PageCostError struct {
	Chunks, Rows, Features int
	Bytes, Limit           int64
}

// Kind is fault.KindInput: the page asked for is too large for this
// process.
func (e *PageCostError) Kind() fault.Kind { return fault.KindInput }

func (e *PageCostError) Error() string {
	return fmt.Sprintf("limit: a page of %d chunks holds %d rows of %d features, %s to read them and evaluate and answer their drift (8 bytes a row's feature, %d a chunk's), over the memory budget of %s; ask for fewer chunks with limit",
		e.Chunks, e.Rows, e.Features, membudget.FormatBytes(e.Bytes), ChunkFeatureBytes, membudget.FormatBytes(e.Limit))
}

// Page evaluates the chunks [lo, hi) that bounds picks once it knows how
// many chunks the monitor has, as Chunks(ctx, m, 0, 0) followed by
// cutting them would, but reads the features of the page's rows only,
// after pricing them (pagePrice: rows × features × 8 bytes, and
// chunks × features × ChunkFeatureBytes with a drift model) against the memory
// budget: a *PageCostError when over. The View's Chunks and Complete
// hold the page, its Total every chunk.
//
// Chunked by size, only the page's rows are read (the thresholds use the
// nominal size); by period, every row's estimate and time are read too,
// since the chunks and their median size, which the thresholds use,
// depend on all of them.
func (s *Service) Page(ctx context.Context, m records.Monitor, bounds func(chunks int) (lo, hi int)) (*View, error) {
	return s.page(ctx, m, bounds, false)
}

// page is Page; with shrink, a page over the budget loses its oldest
// chunks until it fits (the latest must fit alone), as the latest chunks
// of a summary do.
func (s *Service) page(ctx context.Context, m records.Monitor, bounds func(chunks int) (lo, hi int), shrink bool) (*View, error) {
	cm, err := s.Model(&m)
	if err != nil {
		return nil, err
	}
	byTime := m.Period != ""
	features := len(cm.Columns.Features)
	var all []monitor.Chunk // by period: every chunk
	lo, hi := 0, 0
	var release func()
	span := func(n int, times []time.Time) (int, int, error) {
		if n == 0 {
			return 0, 0, nil
		}
		var from, to int
		if byTime {
			var err error
			if all, err = monitor.ByPeriod(times, monitor.Period(m.Period)); err != nil {
				return 0, 0, err
			}
			lo, hi = bounds(len(all))
			if lo >= hi {
				return 0, 0, nil
			}
			for shrink && lo < hi-1 && pagePrice(cm, hi-lo, all[hi-1].End-all[lo].Start) > membudget.Limit() {
				lo++
			}
			from, to = all[lo].Start, all[hi-1].End
		} else {
			lo, hi = bounds((n + m.ChunkSize - 1) / m.ChunkSize)
			from, to = lo*m.ChunkSize, min(n, hi*m.ChunkSize)
		}
		need, l := pagePrice(cm, hi-lo, to-from), membudget.Limit()
		if need > l && shrink {
			return 0, 0, &membudget.Error{What: "the features of the monitor's latest chunk, to evaluate its drift",
				Rows: int64(to - from), Cols: int64(features), Count: 1, Bytes: need, Limit: l}
		}
		if need > l {
			return 0, 0, &PageCostError{Chunks: hi - lo, Rows: to - from, Features: features, Bytes: need, Limit: l}
		}
		// Held until the page is evaluated: concurrent pages, jobs and
		// requests count it (a *membudget.BusyError when they fill the
		// process).
		rel, err := membudget.Reserve("the features of a page of chunks", to-from, features, need)
		if err != nil {
			return 0, 0, err
		}
		release = rel
		return from, to, nil
	}
	release = func() {}
	defer func() { release() }()
	n, ser, err := s.SeriesPage(ctx, m.ID, byTime, span)
	if err != nil {
		return nil, err
	}
	v := &View{Rows: n, Drift: cm.Drift}
	in := monitor.Input{Reference: cm.Reference.SquaredErrors, HeldOut: cm.Reference.HeldOutEstimates,
		ChunkSize: m.ChunkSize, NonNegative: true, Drift: cm.Drift}
	if n == 0 {
		if m.ChunkSize == 0 {
			v.Th = monitor.ReferenceThresholds(nil, monitor.DefaultWidth, true)
			v.DriftTh = v.Th
			return v, nil
		}
	}
	offset := 0 // the row of the page's first in the monitor
	if byTime && n > 0 {
		// The thresholds for chunks of the median size of every chunk,
		// as Run would derive them from all of them.
		_, in.ChunkSize = monitor.MatchedThresholds(in.Reference, all, monitor.DefaultWidth, true)
		v.Total = len(all)
		if lo < hi {
			offset = all[lo].Start
			for _, c := range all[lo:hi] {
				c.Start -= offset
				c.End -= offset
				in.Chunks = append(in.Chunks, c)
			}
			v.Complete = make([]bool, hi-lo)
			for i := range v.Complete {
				v.Complete[i] = true
			}
			if hi == len(all) {
				v.Complete[hi-lo-1] = monitor.Period(m.Period).Label(s.now().UTC()) > all[hi-1].Period
			}
		}
	} else if n > 0 {
		v.Total = (n + m.ChunkSize - 1) / m.ChunkSize
		offset = lo * m.ChunkSize
		if lo < hi {
			if in.Chunks, err = monitor.BySize(len(ser.Estimates), m.ChunkSize); err != nil {
				return nil, err
			}
			v.Complete = make([]bool, len(in.Chunks))
			for i, c := range in.Chunks {
				v.Complete[i] = c.Rows() == m.ChunkSize
			}
		}
	}
	stamps := ser.Stamps
	switch {
	case len(in.Chunks) == 0:
	case byTime:
		// ser holds every row; the page is rows [offset, end).
		end := offset + in.Chunks[len(in.Chunks)-1].End
		in.Estimates, in.Realized = ser.Estimates[offset:end], ser.Realized[offset:end]
		in.Features, stamps = ser.Features[offset:end], nil
	default:
		// ser holds the page's rows only.
		in.Estimates, in.Realized, in.Features = ser.Estimates, ser.Realized, ser.Features
	}
	if in.Drift == nil {
		in.Features = nil
	}
	rep, err := monitor.Run(in)
	if err != nil {
		return nil, err
	}
	v.Chunks, v.Th, v.RefRows, v.DriftTh = rep.Results, rep.Thresholds, rep.ReferenceRows, rep.DriftThresholds
	for i := range v.Chunks {
		c := &v.Chunks[i]
		if !byTime {
			if t := stamps[c.Start]; !t.IsZero() {
				c.From = t
			}
			if t := stamps[c.End-1]; !t.IsZero() {
				c.To = t
			}
			c.Index += lo
		}
		c.Start += offset
		c.End += offset
	}
	return v, nil
}
