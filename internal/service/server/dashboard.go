package server

import (
	"bytes"
	"context"
	"crypto/subtle"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"strconv"
	"strings"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/service/monitorsvc"
	"github.com/genlens/genlens/internal/store/records"
	"github.com/genlens/genlens/metric/monitor"
)

// The dashboard: server-rendered pages (html/template, assets embedded in
// the binary, no JavaScript) with every monitor's chunk chart, the online
// selections and the jobs.

//go:embed assets
var assets embed.FS

var pages = template.Must(template.New("").Funcs(template.FuncMap{
	"num": formatNum,
	"pct": func(done, total int) int {
		if total <= 0 {
			return 0
		}
		return min(100, 100*done/total)
	},
}).ParseFS(assets, "assets/*.html"))

func (s *Server) routeDashboard(mux *http.ServeMux) {
	mux.HandleFunc("GET /{$}", s.dashboard)
	mux.HandleFunc("GET /monitors/{id}", s.monitorPage)
}

// routePublic registers what needs no token: the stylesheet and the
// sign-in form that sets the dashboard's cookie.
func (s *Server) routePublic(mux *http.ServeMux) {
	static, _ := fs.Sub(assets, "assets")
	mux.Handle("GET /static/style.css", http.StripPrefix("/static/", http.FileServerFS(static)))
	mux.HandleFunc("GET /login", func(w http.ResponseWriter, r *http.Request) { s.loginPage(w, r, http.StatusOK, "") })
	mux.HandleFunc("POST /login", s.login)
}

// tokenCookie carries the token for browsers, which cannot send a bearer
// header; it is accepted for GET requests only (see auth), so a forged
// cross-site form cannot use it to change anything.
const tokenCookie = "genlens_token"

func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	addr := clientAddr(r)
	if ok, wait := s.logins.Allow(addr, s.now()); !ok {
		w.Header().Set("Retry-After", retryAfter(wait))
		s.loginPage(w, r, http.StatusTooManyRequests, "too many attempts; wait "+retryAfter(wait)+" s")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 4<<10)
	if err := r.ParseForm(); err != nil {
		s.loginPage(w, r, http.StatusBadRequest, "bad form")
		return
	}
	if s.token == nil {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	if subtle.ConstantTimeCompare([]byte(r.PostForm.Get("token")), s.token) != 1 {
		s.logins.Failed(s.now())
		s.loginPage(w, r, http.StatusUnauthorized, "wrong token")
		return
	}
	s.logins.Succeeded(addr, s.now())
	http.SetCookie(w, &http.Cookie{Name: tokenCookie, Value: string(s.token), Path: "/", HttpOnly: true,
		Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode, MaxAge: 7 * 24 * 3600})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

func (s *Server) loginPage(w http.ResponseWriter, r *http.Request, status int, msg string) {
	s.render(w, r, status, "login.html", struct {
		page
		Error string
	}{s.page("Sign in", 0), msg})
}

// page is what every page's layout shows.
type page struct {
	Title   string
	Store   string
	Now     string
	Refresh int // seconds; 0: no automatic reload
	// LLMLink: the header links the main page's LLM panel, which a
	// server without --llm-upstream may not have.
	LLMLink bool
}

func (s *Server) page(title string, refresh int) page {
	return page{Title: title, Store: s.store.Backend(), Now: s.now().UTC().Format("2006-01-02 15:04 UTC"), Refresh: refresh, LLMLink: s.llm != nil}
}

// render executes a page into a buffer first, so that a template error
// is a clean 500 instead of half a page.
func (s *Server) render(w http.ResponseWriter, r *http.Request, status int, name string, data any) {
	var b bytes.Buffer
	if err := pages.ExecuteTemplate(&b, name, data); err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	w.Write(b.Bytes())
}

// chunkRow is a chunk as the pages print it.
type chunkRow struct {
	Index, N, Labelled               int
	Period                           string
	Estimate, Lower, Upper, Realized string
	Alert, Complete                  bool
	// Drift, when the model has a drift model: the share of rows
	// outside the reference ranges, whether the estimate is an
	// extrapolation and why, the reconstruction error and its alert, and
	// the per-feature Kolmogorov-Smirnov statistics.
	HasDrift             bool
	OutOfRef, Why, Recon string
	Extrapolating, Drift bool
	KS                   string
	// DriftBy names the drift signals that raised Drift.
	DriftBy string
}

type monitorCard struct {
	ID                int64
	Name              string
	Chunking          string
	Rows, Labelled    int
	Features          string
	Prediction        string
	ThLower, ThUpper  string
	RefRows, RefCount int
	// Latest is the latest complete chunk, Incomplete the chunk still
	// filling; RecentAlerts of the RecentChunks latest complete chunks
	// alerted.
	Latest, Incomplete         *chunkRow
	RecentChunks, RecentAlerts int
	Chunks                     []chunkRow
	Chart                      template.HTML
	// DriftChart is the drift panel; DriftRecon says what the
	// reconstruction error's thresholds are, or why it cannot see drift;
	// Note what the monitor cannot show.
	DriftChart template.HTML
	DriftRecon string
	Note       string
	// The chunks shown, First to Last (chunk indices) of Total, are a
	// page of them: Page of Pages, newest first; Older and Newer are the
	// neighbouring pages' numbers (0: none).
	First, Last, Total int
	Page, Pages        int
	Older, Newer       int
	Paged              bool
}

// Chunks drawn and listed at once. A monitor chunked finely (chunk_size
// 1 on 560,000 rows) made a dashboard page of 191 MB: the monitor page
// shows monitorPageChunks chunks a page, the newest page first, and a
// dashboard card the latest cardChunks.
const (
	monitorPageChunks = 250
	cardChunks        = 100
)

func newChunkRow(v *monitorsvc.View, r *monitor.Result, complete bool) chunkRow {
	c := chunkRow{Index: r.Index, N: r.Rows(), Labelled: r.Labelled, Period: r.Period,
		Estimate: formatNum(r.Estimate), Lower: formatNum(r.EstimateLower), Upper: formatNum(r.EstimateUpper), Realized: formatNum(r.Realized),
		Alert: r.Alert, Complete: complete}
	if d := r.Drift; d != nil {
		c.HasDrift, c.Extrapolating, c.Drift = true, d.Extrapolating, d.DriftAlert
		c.DriftBy = strings.Join(d.DriftSignals(), ", ")
		c.OutOfRef = strconv.FormatFloat(100*d.OutOfReference, 'f', 1, 64) + "%"
		c.Recon = formatNum(d.ReconstructionError)
		if d.Extrapolating {
			c.Why = d.Why(v.Drift, r.Rows())
		}
		var ks []string
		for _, f := range d.Features {
			ks = append(ks, fmt.Sprintf("%s %.3f (p %s)", f.Name, f.KS, strconv.FormatFloat(f.P, 'g', 2, 64)))
		}
		c.KS = strings.Join(ks, ", ")
	}
	return c
}

// monitorCard renders page (1: the newest) of a monitor's chunks,
// perPage chunks a page; a page past the last is the last. Only the
// page's rows are read with their features (monitorsvc.Page), and for
// the summary, on a page other than the newest, the latest chunks'.
func (s *Server) monitorCard(ctx context.Context, m records.Monitor, width, height, page, perPage int) (monitorCard, error) {
	c := monitorCard{Page: 1, Pages: 1}
	v, err := s.monitors.Page(ctx, m, func(n int) (int, int) {
		c.Pages = max(1, (n+perPage-1)/perPage)
		c.Page = min(max(page, 1), c.Pages)
		hi := n - (c.Page-1)*perPage
		return max(0, hi-perPage), hi
	})
	if err != nil {
		return monitorCard{}, err
	}
	// The summary counts the latest complete chunks, which the newest
	// page holds (perPage is more than RecentChunks).
	latest := v
	if c.Page > 1 {
		if m.Period == "" {
			latest, err = s.monitors.Chunks(ctx, m, monitorsvc.RecentChunks+1, monitorsvc.RecentChunks+1)
		} else {
			latest, err = s.monitors.Page(ctx, m, func(n int) (int, int) { return max(0, n-monitorsvc.RecentChunks-1), n })
		}
		if err != nil {
			return monitorCard{}, err
		}
	}
	cm, err := s.monitors.Model(&m)
	if err != nil {
		return monitorCard{}, err
	}
	c.ID, c.Name, c.Rows, c.Labelled = m.ID, m.Name, m.Rows, m.Labelled
	c.Features, c.Prediction = strings.Join(cm.Columns.Features, ", "), cm.Columns.Prediction
	c.ThLower, c.ThUpper, c.RefRows, c.RefCount = formatNum(v.Th.Lower), formatNum(v.Th.Upper), v.RefRows, v.Th.Chunks
	n := v.Total
	c.Total, c.Paged = n, n > perPage
	if c.Page < c.Pages {
		c.Older = c.Page + 1
	}
	if c.Page > 1 {
		c.Newer = c.Page - 1
	}
	if len(v.Chunks) > 0 {
		c.First, c.Last = v.Chunks[0].Index, v.Chunks[len(v.Chunks)-1].Index
	}
	title := m.Name + ": estimated MSE per chunk"
	if c.Paged {
		title += fmt.Sprintf(" (chunks %d to %d of %d)", c.First, c.Last, n)
	}
	c.Chart = chunkChart(v, width, height, title)
	if m.ChunkSize > 0 {
		c.Chunking = formatInt(m.ChunkSize) + " rows per chunk"
	} else {
		c.Chunking = "one chunk per " + m.Period
	}
	for i := range v.Chunks {
		c.Chunks = append(c.Chunks, newChunkRow(v, &v.Chunks[i], v.Complete[i]))
	}
	sum := latest.Summary()
	c.RecentChunks, c.RecentAlerts = sum.Recent, sum.RecentAlerts
	if sum.Latest != nil {
		r := newChunkRow(latest, sum.Latest, true)
		c.Latest = &r
	}
	if sum.Incomplete != nil {
		r := newChunkRow(latest, sum.Incomplete, false)
		c.Incomplete = &r
	}
	if v.Drift != nil {
		c.DriftRecon = monitor.ReconstructionNote(v.DriftTh)
		c.DriftChart = driftChart(v, width, height*3/4, m.Name+": drift per chunk")
	} else {
		c.Note = monitor.NoDriftNote("the model")
	}
	return c, nil
}

func formatInt(n int) string { return formatNum(float64(n)) }

func (s *Server) dashboard(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	ms, err := s.monitors.Monitors(ctx)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	data := struct {
		page
		Monitors      []monitorCard
		Selections    []SelectionView
		SelectionsErr string
		Jobs          []JobView
		JobsErr       string
		LLM           *llmPanel
		LLMErr        string
	}{page: s.page("Dashboard", 30)}
	for _, m := range ms {
		if err := s.monitors.Counts(ctx, &m); err != nil {
			s.writeError(w, r, err)
			return
		}
		c, err := s.monitorCard(ctx, m, 560, 230, 1, cardChunks)
		if errors.Is(err, monitorsvc.ErrStoredModel) {
			c, err = monitorCard{ID: m.ID, Name: m.Name, Rows: m.Rows, Labelled: m.Labelled, Note: err.Error()}, nil
		}
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		data.Monitors = append(data.Monitors, c)
	}
	// Selections and jobs come from the job runner; a failure there must
	// not hide the monitors.
	if data.Selections, err = s.dashboardSelections(ctx); err != nil {
		s.log.Error("dashboard: selections", "err", err)
		data.SelectionsErr = "see the server log"
	}
	if data.Jobs, err = s.dashboardJobs(ctx); err != nil {
		s.log.Error("dashboard: jobs", "err", err)
		data.JobsErr = "see the server log"
	}
	if data.LLM, err = s.dashboardLLM(ctx); err != nil {
		s.log.Error("dashboard: llm requests", "err", err)
		data.LLMErr = "see the server log"
	}
	s.render(w, r, http.StatusOK, "index.html", data)
}

func (s *Server) monitorPage(w http.ResponseWriter, r *http.Request) {
	pageNo := 1
	if p := r.URL.Query().Get("page"); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 {
			s.writeError(w, r, fault.Fieldf("page", "{page} %q: want a page number, 1 for the newest chunks", p))
			return
		}
		pageNo = n
	}
	m, err := s.lookupMonitor(r)
	if err == nil {
		err = s.monitors.Counts(r.Context(), m)
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	c, err := s.monitorCard(r.Context(), *m, 1100, 360, pageNo, monitorPageChunks)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "monitor.html", struct {
		page
		Monitor monitorCard
	}{s.page(m.Name, 30), c})
}
