package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/format/jsonnum"
	"github.com/genlens/genlens/internal/service/monitorsvc"
	"github.com/genlens/genlens/internal/store/records"
	"github.com/genlens/genlens/metric/checkmodel"
	"github.com/genlens/genlens/metric/monitor"
)

// The monitors API: a deployed regression model watched with the check
// model of "A One-Step MSE Estimation of Models in Production"
// (anonymous, under review, 2024), as `genlens mse estimate` does for a
// file, but fed row batch by row batch. Each row's estimate 2 (h(x) - f(x))²
// is computed once at ingest and stored; chunks, bands, thresholds and
// alerts come from package monitor at read time, so a label arriving
// late changes nothing but the realised MSE.

func (s *Server) routeMonitors(mux *http.ServeMux) {
	mux.HandleFunc("POST /api/v1/monitors", s.createMonitor)
	mux.HandleFunc("GET /api/v1/monitors", s.listMonitors)
	mux.HandleFunc("GET /api/v1/monitors/{id}", s.getMonitor)
	mux.HandleFunc("DELETE /api/v1/monitors/{id}", s.deleteMonitor)
	mux.HandleFunc("POST /api/v1/monitors/{id}/rows", s.postRows)
	mux.HandleFunc("POST /api/v1/monitors/{id}/labels", s.postLabels)
	mux.HandleFunc("GET /api/v1/monitors/{id}/chunks", s.getChunks)
}

// createMonitorRequest is the body of POST /api/v1/monitors.
type createMonitorRequest struct {
	Name      string          `json:"name"`
	Model     json.RawMessage `json:"model"` // the file `genlens mse fit` writes
	ChunkSize int             `json:"chunk_size,omitempty"`
	Period    string          `json:"period,omitempty"` // hour, day, week, month, quarter, year
}

// maxNameLen bounds monitor names: they are Prometheus label values and
// dashboard headings.
const maxNameLen = 200

// maxChunkSize bounds chunk_size: a chunk's rows are read into memory
// together (and Postgres stores the size as a 32-bit integer).
const maxChunkSize = 10_000_000

// maxAbsValue bounds the magnitude of features, predictions and targets:
// a chunk's statistics square them, square their differences and sum
// those over up to maxChunkSize rows, which must stay finite (1e308 as a
// feature came back as null estimates and infinite realised errors, and
// a target of 1e200 failed Postgres's arithmetic).
const maxAbsValue = 1e100

// maxEstimate bounds a row's estimate 2 (h(x) - f(x))²: a chunk's
// sampling error sums the squares of its rows' estimates.
const maxEstimate = 1e150

// hasNUL reports a NUL character, which Postgres text cannot hold.
func hasNUL(s string) bool { return strings.IndexByte(s, 0) >= 0 }

func (req *createMonitorRequest) validate() (*checkmodel.Model, error) {
	switch {
	case req.Name == "":
		return nil, fault.Fieldf("name", "{name} is required")
	case len(req.Name) > maxNameLen:
		return nil, fault.Fieldf("name", "{name} is %d bytes long; at most %d", len(req.Name), maxNameLen)
	case hasNUL(req.Name):
		return nil, fault.Fieldf("name", "{name} %q holds a NUL character", req.Name)
	case len(req.Model) == 0 || string(req.Model) == "null":
		return nil, fault.Fieldf("model", "{model} is required: the JSON document `genlens mse fit` writes")
	case !utf8.Valid(req.Model):
		return nil, fault.Fieldf("model", "{model} is not valid UTF-8")
	case req.ChunkSize != 0 && req.Period != "":
		return nil, fault.Fieldf("chunk_size", "give one of {chunk_size} and {period}")
	case req.ChunkSize == 0 && req.Period == "":
		return nil, fault.Fieldf("chunk_size", "{chunk_size} or {period} is required")
	case req.ChunkSize < 0:
		return nil, fault.Fieldf("chunk_size", "{chunk_size} %d must be positive", req.ChunkSize)
	case req.ChunkSize > maxChunkSize:
		return nil, fault.Fieldf("chunk_size", "{chunk_size} %d is over %d rows", req.ChunkSize, maxChunkSize)
	}
	if req.Period != "" {
		p, err := monitor.ParsePeriod(req.Period)
		if err != nil {
			return nil, fault.Fieldf("period", "{period}: %v", err)
		}
		req.Period = string(p)
	}
	// A bad model is bad input (422), named as the request field.
	return checkmodel.DecodeModel("model", req.Model)
}

type monitorJSON struct {
	ID         int64    `json:"id"`
	Name       string   `json:"name"`
	ChunkSize  int      `json:"chunk_size,omitempty"`
	Period     string   `json:"period,omitempty"`
	Features   []string `json:"features,omitempty"`
	Prediction string   `json:"prediction,omitempty"`
	Rows       *int     `json:"rows,omitempty"`
	Labelled   *int     `json:"labelled,omitempty"`
	Created    string   `json:"created,omitempty"`
	// Summary is the state of the latest chunks (GET only).
	Summary *summaryJSON `json:"summary,omitempty"`
	// Note says what the monitor cannot report (a model file without
	// a drift model).
	Note string `json:"note,omitempty"`
}

func (s *Server) createMonitor(w http.ResponseWriter, r *http.Request) {
	var req createMonitorRequest
	if err := s.decodeJSON(w, r, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	m, err := req.validate()
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	rec := records.Monitor{Name: req.Name, Model: req.Model, ChunkSize: req.ChunkSize, Period: req.Period}
	if err := s.monitors.CreateMonitor(r.Context(), &rec); err != nil {
		s.writeError(w, r, err)
		return
	}
	s.monitors.CacheModel(&rec, m)
	w.Header().Set("Location", fmt.Sprintf("/api/v1/monitors/%d", rec.ID))
	s.writeJSON(w, http.StatusCreated, monitorJSON{ID: rec.ID, Name: rec.Name})
}

func (s *Server) monitorView(ctx context.Context, m *records.Monitor) (monitorJSON, error) {
	cm, err := s.monitors.Model(m)
	if err != nil {
		return monitorJSON{}, err
	}
	v, err := s.monitors.Chunks(ctx, *m, monitorsvc.RecentChunks+1, monitorsvc.RecentChunks+1)
	if err != nil {
		return monitorJSON{}, err
	}
	rows, lab := m.Rows, m.Labelled
	out := monitorJSON{ID: m.ID, Name: m.Name, ChunkSize: m.ChunkSize, Period: m.Period,
		Features: cm.Columns.Features, Prediction: cm.Columns.Prediction, Rows: &rows, Labelled: &lab,
		Created: m.Created.Format(time.RFC3339), Summary: summaryDoc(v)}
	if cm.Drift == nil {
		out.Note = monitor.NoDriftNote("the model")
	}
	return out, nil
}

func (s *Server) listMonitors(w http.ResponseWriter, r *http.Request) {
	ms, err := s.monitors.Monitors(r.Context())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := struct {
		Monitors []monitorJSON `json:"monitors"`
	}{Monitors: []monitorJSON{}}
	for i := range ms {
		if err := s.monitors.Counts(r.Context(), &ms[i]); err != nil {
			s.writeError(w, r, err)
			return
		}
		v, err := s.monitorView(r.Context(), &ms[i])
		if errors.Is(err, monitorsvc.ErrStoredModel) {
			m := &ms[i]
			v, err = monitorJSON{ID: m.ID, Name: m.Name, ChunkSize: m.ChunkSize, Period: m.Period, Rows: &m.Rows, Labelled: &m.Labelled,
				Created: m.Created.Format(time.RFC3339), Note: err.Error()}, nil
		}
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		out.Monitors = append(out.Monitors, v)
	}
	s.writeJSON(w, http.StatusOK, out)
}

func (s *Server) lookupMonitor(r *http.Request) (*records.Monitor, error) {
	id, err := pathID(r, "id", "monitor")
	if err != nil {
		return nil, err
	}
	return s.monitors.Monitor(r.Context(), id)
}

func (s *Server) getMonitor(w http.ResponseWriter, r *http.Request) {
	m, err := s.lookupMonitor(r)
	if err == nil {
		err = s.monitors.Counts(r.Context(), m)
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	v, err := s.monitorView(r.Context(), m)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeJSON(w, http.StatusOK, v)
}

// deleteMonitor removes a monitor with its rows and labels: 204.
func (s *Server) deleteMonitor(w http.ResponseWriter, r *http.Request) {
	m, err := s.lookupMonitor(r)
	if err == nil {
		err = s.monitors.DeleteMonitor(r.Context(), m.ID)
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.monitors.ForgetModel(m)
	s.metrics.rows.DeleteLabelValues(m.Name)
	s.metrics.labels.DeleteLabelValues(m.Name)
	w.WriteHeader(http.StatusNoContent)
}

// jsonFloat is a JSON number that also accepts null and strings ("NaN",
// "Inf") so that a bad value can be refused naming its row and field
// instead of failing the whole document's decoding.
type jsonFloat struct {
	v   float64
	bad string // what was given when it is not a finite number
	set bool
}

func (f *jsonFloat) UnmarshalJSON(b []byte) error {
	f.set = true
	v, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		f.v, f.bad = math.NaN(), string(b)
		return nil
	}
	f.v = v
	return nil
}

type rowJSON struct {
	ID         string               `json:"id"`
	Timestamp  string               `json:"timestamp,omitempty"`
	Features   map[string]jsonFloat `json:"features"`
	Prediction jsonFloat            `json:"prediction"`
}

// rowError is the 422 of a bad row: nothing of its batch is stored.
func rowError(kind string, i int, id, field, format string, a ...any) error {
	idx := i
	msg := fmt.Sprintf("%s[%d]", kind, i)
	if id != "" {
		msg += fmt.Sprintf(" (id %q)", id)
	}
	if field != "" {
		msg += " " + field
	}
	msg += ": " + fmt.Sprintf(format, a...) + "; nothing of this batch was stored"
	return &httpError{status: http.StatusUnprocessableEntity, body: errorBody{Error: msg, Kind: "input", Field: field, Index: &idx, ID: id}}
}

// maxIDLen bounds row ids.
const maxIDLen = 256

func (s *Server) postRows(w http.ResponseWriter, r *http.Request) {
	m, err := s.lookupMonitor(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	cm, err := s.monitors.Model(m)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var req struct {
		Rows []rowJSON `json:"rows"`
	}
	if err := s.decodeJSON(w, r, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	rows, err := s.checkRows(m, cm, req.Rows)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := s.monitors.InsertRows(r.Context(), m.ID, rows); err != nil {
		var de *records.DuplicateError
		if errors.As(err, &de) {
			err = rowError("rows", de.Index, de.ID, "id", "a row with this id is stored already")
		}
		s.writeError(w, r, err)
		return
	}
	s.metrics.rows.WithLabelValues(m.Name).Add(float64(len(rows)))
	s.writeJSON(w, http.StatusOK, map[string]int{"accepted": len(rows)})
}

// checkRows validates a whole batch before anything is stored and
// computes every row's estimate: features must be exactly the model's
// columns, every number finite, ids unique, timestamps RFC 3339 (and
// present when the monitor chunks by period).
func (s *Server) checkRows(m *records.Monitor, cm *checkmodel.Model, in []rowJSON) ([]records.Row, error) {
	if len(in) == 0 {
		return nil, fault.Fieldf("rows", "{rows} is empty")
	}
	names := cm.Columns.Features
	d := len(names)
	x := mat.NewDense(len(in), d, nil)
	pred := make([]float64, len(in))
	out := make([]records.Row, len(in))
	seen := make(map[string]int, len(in))
	for i, row := range in {
		switch {
		case row.ID == "":
			return nil, rowError("rows", i, "", "id", "missing or empty")
		case len(row.ID) > maxIDLen:
			return nil, rowError("rows", i, "", "id", "%d bytes long; at most %d", len(row.ID), maxIDLen)
		case hasNUL(row.ID):
			return nil, rowError("rows", i, row.ID, "id", "holds a NUL character")
		}
		if j, ok := seen[row.ID]; ok {
			return nil, rowError("rows", i, row.ID, "id", "repeats rows[%d]'s id", j)
		}
		seen[row.ID] = i
		feat := make([]float64, d)
		for j, name := range names {
			v, ok := row.Features[name]
			if !ok {
				return nil, rowError("rows", i, row.ID, "features."+name, "missing (the model's features: %v)", names)
			}
			if v.bad != "" || math.IsNaN(v.v) || math.IsInf(v.v, 0) {
				return nil, rowError("rows", i, row.ID, "features."+name, "%s is not a finite number", orValue(v))
			}
			if math.Abs(v.v) > maxAbsValue {
				return nil, rowError("rows", i, row.ID, "features."+name, tooLarge, orValue(v), maxAbsValue)
			}
			feat[j] = v.v
		}
		if len(row.Features) != d { // an extra column; name the first in order
			for _, name := range slices.Sorted(maps.Keys(row.Features)) {
				if !slices.Contains(names, name) {
					return nil, rowError("rows", i, row.ID, "features."+name, "not a feature of the model (its features: %v)", names)
				}
			}
		}
		p := row.Prediction
		switch {
		case !p.set:
			return nil, rowError("rows", i, row.ID, "prediction", "missing")
		case p.bad != "" || math.IsNaN(p.v) || math.IsInf(p.v, 0):
			return nil, rowError("rows", i, row.ID, "prediction", "%s is not a finite number", orValue(p))
		case math.Abs(p.v) > maxAbsValue:
			return nil, rowError("rows", i, row.ID, "prediction", tooLarge, orValue(p), maxAbsValue)
		}
		var ts time.Time
		if row.Timestamp != "" {
			t, err := time.Parse(time.RFC3339Nano, row.Timestamp)
			if err != nil {
				return nil, rowError("rows", i, row.ID, "timestamp", "%q is not an RFC 3339 time such as 2026-11-23T10:00:00Z", row.Timestamp)
			}
			if !records.TimeStorable(t) { // 0001-01-01, the zero time, too
				return nil, rowError("rows", i, row.ID, "timestamp", "%q is outside %s to %s, the times stored exactly",
					row.Timestamp, records.MinTime.Format(time.RFC3339Nano), records.MaxTime.Format(time.RFC3339Nano))
			}
			ts = t.UTC()
		} else if m.Period != "" {
			return nil, rowError("rows", i, row.ID, "timestamp", "missing; this monitor chunks rows by %s", m.Period)
		}
		x.SetRow(i, feat)
		pred[i] = p.v
		out[i] = records.Row{ID: row.ID, Time: ts, Features: feat, Prediction: p.v}
	}
	est, err := cm.RowEstimates(x, pred)
	if err != nil {
		return nil, err
	}
	for i := range out {
		if e := est[i]; math.IsNaN(e) || math.IsInf(e, 0) || e > maxEstimate {
			return nil, rowError("rows", i, out[i].ID, "features", "the check model's estimate 2 (h(x) - f(x))² of this row is %g, over %g: its features or prediction are far outside what the model was fitted on",
				e, maxEstimate)
		}
		out[i].Estimate = est[i]
	}
	return out, nil
}

// tooLarge is the message of a number over maxAbsValue.
const tooLarge = "%s is too large: at most %g in magnitude, so that squares and their sums over a chunk stay finite"

func orValue(f jsonFloat) string {
	if f.bad != "" {
		return f.bad
	}
	return strconv.FormatFloat(f.v, 'g', -1, 64)
}

type labelJSON struct {
	ID     string    `json:"id"`
	Target jsonFloat `json:"target"`
}

func (s *Server) postLabels(w http.ResponseWriter, r *http.Request) {
	m, err := s.lookupMonitor(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var req struct {
		Labels []labelJSON `json:"labels"`
	}
	if err := s.decodeJSON(w, r, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	if len(req.Labels) == 0 {
		s.writeError(w, r, fault.Fieldf("labels", "{labels} is empty"))
		return
	}
	labels := make([]records.Label, len(req.Labels))
	seen := make(map[string]int, len(req.Labels))
	for i, l := range req.Labels {
		switch {
		case l.ID == "":
			err = rowError("labels", i, "", "id", "missing or empty")
		case !l.Target.set:
			err = rowError("labels", i, l.ID, "target", "missing")
		case len(l.ID) > maxIDLen:
			err = rowError("labels", i, "", "id", "%d bytes long; at most %d", len(l.ID), maxIDLen)
		case hasNUL(l.ID):
			err = rowError("labels", i, l.ID, "id", "holds a NUL character")
		case l.Target.bad != "" || math.IsNaN(l.Target.v) || math.IsInf(l.Target.v, 0):
			err = rowError("labels", i, l.ID, "target", "%s is not a finite number", orValue(l.Target))
		case math.Abs(l.Target.v) > maxAbsValue:
			err = rowError("labels", i, l.ID, "target", tooLarge, orValue(l.Target), maxAbsValue)
		}
		if j, ok := seen[l.ID]; ok && err == nil {
			err = rowError("labels", i, l.ID, "id", "repeats labels[%d]'s id", j)
		}
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		seen[l.ID] = i
		labels[i] = records.Label{ID: l.ID, Target: l.Target.v}
	}
	if err := s.monitors.SetLabels(r.Context(), m.ID, labels); err != nil {
		var ue *records.UnknownRowError
		if errors.As(err, &ue) {
			err = rowError("labels", ue.Index, ue.ID, "id", "no row of this monitor has this id")
		}
		s.writeError(w, r, err)
		return
	}
	s.metrics.labels.WithLabelValues(m.Name).Add(float64(len(labels)))
	s.writeJSON(w, http.StatusOK, map[string]int{"accepted": len(labels)})
}

type chunksJSON struct {
	Monitor        monitorJSON `json:"monitor"`
	Rows           int         `json:"rows"`
	LowerThreshold jsonnum.Num `json:"lower_threshold"`
	UpperThreshold jsonnum.Num `json:"upper_threshold"`
	ReferenceRows  int         `json:"reference_chunk_rows"`
	ReferenceCount int         `json:"reference_chunks"`
	// TotalChunks counts every chunk; Chunks holds them all, or with
	// ?limit the page asked for (NextBefore then names the next older
	// page's before, absent on the oldest).
	TotalChunks int                 `json:"total_chunks"`
	NextBefore  *int                `json:"next_before,omitempty"`
	Chunks      []monitor.ChunkView `json:"chunks"`
}

// MaxChunksLimit bounds ?limit of GET /api/v1/monitors/{id}/chunks.
const MaxChunksLimit = 10000

// chunkPage is the part of a monitor's chunks GET .../chunks answers: by
// default all of them (as before paging existed), else with limit the
// limit chunks before index before (default: after the last), oldest
// first, so that a client walks a monitor of any length from the newest
// page back by passing next_before.
type chunkPage struct {
	limit, before int
}

func parseChunkPage(r *http.Request) (chunkPage, error) {
	p := chunkPage{before: -1}
	q := r.URL.Query()
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxChunksLimit {
			return p, errStatus(http.StatusBadRequest, "limit %q: want 1 to %d", v, MaxChunksLimit)
		}
		p.limit = n
	}
	if v := q.Get("before"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return p, errStatus(http.StatusBadRequest, "before %q: want a chunk index, 0 or more", v)
		}
		if p.limit == 0 {
			return p, errStatus(http.StatusBadRequest, "before %q needs limit", v)
		}
		p.before = n
	}
	return p, nil
}

// bounds returns the half-open range of chunk positions of the page among
// n chunks, and the before of the next older page (-1 when none).
func (p chunkPage) bounds(n int) (lo, hi, next int) {
	if p.limit == 0 {
		return 0, n, -1
	}
	hi = n
	if p.before >= 0 && p.before < n {
		hi = p.before
	}
	lo = max(hi-p.limit, 0)
	next = -1
	if lo > 0 {
		next = lo
	}
	return lo, hi, next
}

func (s *Server) getChunks(w http.ResponseWriter, r *http.Request) {
	m, err := s.lookupMonitor(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	page, err := parseChunkPage(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	// Only the page's rows are read, their features priced first: a
	// monitor of thousands of features and chunks is paged, not loaded.
	v, err := s.monitors.Page(r.Context(), *m, func(n int) (int, int) {
		lo, hi, _ := page.bounds(n)
		return lo, hi
	})
	var pe *monitorsvc.PageCostError
	if errors.As(err, &pe) {
		s.writeJSON(w, http.StatusUnprocessableEntity, errorBody{Error: pe.Error(), Kind: fault.KindInput.String(), Field: "limit"})
		return
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeJSON(w, http.StatusOK, chunksDoc(*m, v, page))
}

// chunksDoc is the answer of GET .../chunks from v, the page's chunks
// (monitorsvc.Service.Page).
func chunksDoc(m records.Monitor, v *monitorsvc.View, page chunkPage) chunksJSON {
	out := chunksJSON{Monitor: monitorJSON{ID: m.ID, Name: m.Name, ChunkSize: m.ChunkSize, Period: m.Period},
		Rows: v.Rows, LowerThreshold: jsonnum.Num(v.Th.Lower), UpperThreshold: jsonnum.Num(v.Th.Upper),
		ReferenceRows: v.RefRows, ReferenceCount: v.Th.Chunks, TotalChunks: v.Total, Chunks: []monitor.ChunkView{}}
	if _, _, next := page.bounds(v.Total); next >= 0 {
		out.NextBefore = &next
	}
	for i := range v.Chunks {
		out.Chunks = append(out.Chunks, chunkDoc(v, &v.Chunks[i], v.Complete[i]))
	}
	return out
}

// chunkDoc is the JSON of the chunk c of v, as `mse estimate --json`
// shows its chunks, with the monitor's labelled count and whether the
// chunk is complete.
func chunkDoc(v *monitorsvc.View, c *monitor.Result, complete bool) monitor.ChunkView {
	j := monitor.NewChunkView(c, v.Drift, v.DriftTh)
	labelled := c.Labelled
	j.Labelled, j.Complete = &labelled, &complete
	return j
}

// summaryJSON is a monitor's summary in GET /api/v1/monitors: the
// latest complete chunk, how many of the latest complete chunks alerted,
// and the incomplete chunk still filling.
type summaryJSON struct {
	Latest       *monitor.ChunkView `json:"latest_complete"`
	RecentChunks int                `json:"recent_chunks"`
	RecentAlerts int                `json:"recent_alerts"`
	Incomplete   *monitor.ChunkView `json:"incomplete"`
}

func summaryDoc(v *monitorsvc.View) *summaryJSON {
	sum := v.Summary()
	out := &summaryJSON{RecentChunks: sum.Recent, RecentAlerts: sum.RecentAlerts}
	if sum.Latest != nil {
		j := chunkDoc(v, sum.Latest, true)
		out.Latest = &j
	}
	if sum.Incomplete != nil {
		j := chunkDoc(v, sum.Incomplete, false)
		out.Incomplete = &j
	}
	return out
}
