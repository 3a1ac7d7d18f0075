package server_test

import (
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/genlens/genlens/internal/service/server"
	"github.com/genlens/genlens/internal/testkit/dbtest"
)

func TestAuth(t *testing.T) {
	ts := newTestServer(t, dbtest.SQLite(t), server.Options{Token: "s3cret-s3cret-s3cret"})
	get := func(path, auth string) int {
		req, _ := http.NewRequest("GET", ts.URL+path, nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, c := range []struct {
		path, auth string
		code       int
	}{
		{"/healthz", "", 200},
		{"/livez", "", 200},
		{"/api/v1/monitors", "", 401},
		{"/api/v1/monitors", "Bearer wrong", 401},
		{"/api/v1/monitors", "Bearer s3cre", 401},
		{"/api/v1/monitors", "Basic s3cret-s3cret-s3cret", 401},
		{"/api/v1/monitors", "s3cret-s3cret-s3cret", 401},
		{"/api/v1/monitors", "Bearer s3cret-s3cret-s3cret", 200},
		{"/api/v1/monitors", "bearer s3cret-s3cret-s3cret", 200},
		{"/metrics", "", 401},
		{"/metrics", "Bearer s3cret-s3cret-s3cret", 200},
		{"/", "", 401},
		{"/", "Bearer s3cret-s3cret-s3cret", 200},
		{"/api/v1/nothing", "", 401}, // no probing for routes without a token
	} {
		if got := get(c.path, c.auth); got != c.code {
			t.Errorf("GET %s with %q: %d, want %d", c.path, c.auth, got, c.code)
		}
	}
}

func TestBodyLimit(t *testing.T) {
	limit := int64(len(checkModel(t)) + 1<<10) // room for the monitor
	ts := newTestServer(t, dbtest.SQLite(t), server.Options{MaxBody: limit})
	id := ts.createMonitor(t, "m", map[string]any{"chunk_size": 10})
	rows := genRows(int(limit/40), 0, 1, "r", time.Time{}) // over 40 bytes a row
	code, raw := ts.call(t, "POST", fmt.Sprintf("/api/v1/monitors/%d/rows", id), rowsBody(rows, false), nil)
	if code != http.StatusRequestEntityTooLarge {
		t.Fatalf("oversized batch: %d %s, want 413", code, raw)
	}
}

// /metrics shows every monitor's latest complete chunk under its name
// (not the incomplete chunk still filling, which would hide an alert),
// with its index and end time, how many of the latest complete chunks
// alerted, the incomplete chunk's rows and estimate, extrapolation and
// drift, the rows ingested and request latencies.
func TestMetrics(t *testing.T) {
	ts := newTestServer(t, dbtest.SQLite(t), server.Options{})
	id := ts.createMonitor(t, "prod-model", map[string]any{"chunk_size": 40})
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	rows := append(genRows(40, 0, 5, "a", t0), genRows(60, 2.5, 6, "b", t0.Add(40*37*time.Minute))...)
	for i := range rows {
		rows[i].Time = t0.Add(time.Duration(i) * 37 * time.Minute)
	}
	ts.call(t, "POST", fmt.Sprintf("/api/v1/monitors/%d/rows", id), rowsBody(rows, true), nil)
	ts.call(t, "POST", fmt.Sprintf("/api/v1/monitors/%d/labels", id), labelsBody(rows[45:]), nil)
	var got chunks
	ts.call(t, "GET", fmt.Sprintf("/api/v1/monitors/%d/chunks", id), nil, &got)
	if len(got.Chunks) != 3 || *got.Chunks[2].Complete || !*got.Chunks[1].Complete {
		t.Fatalf("chunks %+v: want 2 complete and an incomplete third", got.Chunks)
	}
	latest, inc := got.Chunks[1], got.Chunks[2]
	if !latest.Alert || !*latest.Extrapolating {
		t.Fatalf("chunk 1 (shifted by 2.5) should alert and extrapolate: %+v", latest)
	}
	_, raw := ts.call(t, "GET", "/metrics", nil, nil)
	text := string(raw)
	value := func(name string) float64 {
		t.Helper()
		m := regexp.MustCompile(`(?m)^` + name + `\{monitor="prod-model"\} (\S+)$`).FindStringSubmatch(text)
		if m == nil {
			t.Fatalf("no %s{monitor=\"prod-model\"} in\n%s", name, text)
		}
		v, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	b2f := func(b bool) *float64 {
		v := 0.0
		if b {
			v = 1
		}
		return &v
	}
	end, _ := time.Parse(time.RFC3339, latest.To)
	endSec := float64(end.Unix())
	if !end.Equal(rows[79].Time) {
		t.Fatalf("chunk 1 ends at %q, want its last row's %v", latest.To, rows[79].Time)
	}
	alerts := 0
	for _, c := range got.Chunks[:2] {
		if c.Alert {
			alerts++
		}
	}
	for _, c := range []struct {
		name string
		want *float64
	}{
		{"genlens_monitor_estimated_mse", latest.EstimatedMSE},
		{"genlens_monitor_estimated_mse_lower", latest.SELower},
		{"genlens_monitor_estimated_mse_upper", latest.SEUpper},
		{"genlens_monitor_realized_mse", latest.RealizedMSE},
		{"genlens_monitor_alert", b2f(latest.Alert)},
		{"genlens_monitor_threshold_upper", got.UpperThreshold},
		{"genlens_monitor_chunk_index", b2f(true)},
		{"genlens_monitor_chunk_end_time_seconds", &endSec},
		{"genlens_monitor_recent_chunks", ptr(2.0)},
		{"genlens_monitor_recent_alerts", ptr(float64(alerts))},
		{"genlens_monitor_chunks", ptr(3.0)},
		{"genlens_monitor_incomplete_rows", ptr(20.0)},
		{"genlens_monitor_incomplete_estimated_mse", inc.EstimatedMSE},
		{"genlens_monitor_out_of_reference", latest.OutOfReference},
		{"genlens_monitor_extrapolating", b2f(*latest.Extrapolating)},
		{"genlens_monitor_reconstruction_error", latest.ReconstructionError},
		{"genlens_monitor_drift_alert", b2f(*latest.DriftAlert)},
	} {
		if v := value(c.name); c.want == nil || v != *c.want {
			t.Errorf("%s = %v, want %v", c.name, v, c.want)
		}
	}
	if v := value("genlens_monitor_rows"); v != 100 {
		t.Errorf("rows %v, want 100", v)
	}
	if v := value("genlens_rows_ingested_total"); v != 100 {
		t.Errorf("rows ingested %v, want 100", v)
	}
	for _, want := range []string{
		`genlens_http_request_duration_seconds_count{code="200",route="POST /api/v1/monitors/{id}/rows"} 1`,
		`genlens_job_queue_depth 0`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in /metrics", want)
		}
	}
}

func ptr[T any](v T) *T { return &v }

func TestHealthz(t *testing.T) {
	ts := newTestServer(t, dbtest.SQLite(t), server.Options{})
	var h map[string]string
	if code, raw := ts.call(t, "GET", "/healthz", nil, &h); code != 200 || h["status"] != "ok" || h["store"] != "sqlite" {
		t.Fatalf("%d %s", code, raw)
	}
	ts.db.Close()
	if code, raw := ts.call(t, "GET", "/healthz", nil, &h); code != 503 {
		t.Fatalf("closed store: %d %s, want 503", code, raw)
	}
}

func TestIsLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:8080": true, "localhost:80": true, "[::1]:8080": true, "127.9.9.9:1": true,
		":8080": false, "0.0.0.0:8080": false, "[::]:80": false, "192.168.1.2:80": false, "example.com:80": false, "nonsense": false,
	} {
		if got := server.IsLoopback(addr); got != want {
			t.Errorf("IsLoopback(%q) = %v, want %v", addr, got, want)
		}
	}
}

// The sign-in cookie opens the dashboard's pages (GET), never a change:
// a forged cross-site POST carrying it is refused.
func TestLoginCookie(t *testing.T) {
	ts := newTestServer(t, dbtest.SQLite(t), server.Options{Token: "s3cret-s3cret-s3cret"})
	id := ts.createMonitor(t, "m", map[string]any{"chunk_size": 10})
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	login := func(tok string) *http.Response {
		resp, err := noRedirect.PostForm(ts.URL+"/login", map[string][]string{"token": {tok}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if resp := login("wrong"); resp.StatusCode != 401 || len(resp.Cookies()) != 0 {
		t.Fatalf("wrong token: %d with %d cookies", resp.StatusCode, len(resp.Cookies()))
	}
	resp := login("s3cret-s3cret-s3cret")
	if resp.StatusCode != 303 || len(resp.Cookies()) != 1 || !resp.Cookies()[0].HttpOnly || resp.Cookies()[0].SameSite != http.SameSiteStrictMode {
		t.Fatalf("sign-in: %d, cookies %v", resp.StatusCode, resp.Cookies())
	}
	cookie := resp.Cookies()[0]
	send := func(method, path, body string) int {
		req, _ := http.NewRequest(method, ts.URL+path, strings.NewReader(body))
		req.AddCookie(cookie)
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := send("GET", "/", ""); code != 200 {
		t.Errorf("dashboard with the cookie: %d", code)
	}
	if code := send("GET", fmt.Sprintf("/api/v1/monitors/%d/chunks", id), ""); code != 200 {
		t.Errorf("chunks with the cookie: %d", code)
	}
	if code := send("POST", fmt.Sprintf("/api/v1/monitors/%d/rows", id), `{"rows":[{"id":"x","features":{"x":1,"noise_feature":1},"prediction":1}]}`); code != 401 {
		t.Errorf("POST with only the cookie: %d, want 401", code)
	}
	// A browser without it is sent to the form.
	req, _ := http.NewRequest("GET", ts.URL+"/", nil)
	req.Header.Set("Accept", "text/html")
	r2, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r2.Body.Close()
	if r2.StatusCode != 303 || r2.Header.Get("Location") != "/login" {
		t.Errorf("browser without a cookie: %d to %q", r2.StatusCode, r2.Header.Get("Location"))
	}
}

// Every phase of a connection has a timeout (no slow-loris).
func TestHTTPServerTimeouts(t *testing.T) {
	ts := newTestServer(t, dbtest.SQLite(t), server.Options{})
	hs := ts.srv.HTTPServer("127.0.0.1:0")
	if hs.ReadHeaderTimeout <= 0 || hs.ReadTimeout <= 0 || hs.WriteTimeout <= 0 || hs.IdleTimeout <= 0 || hs.MaxHeaderBytes <= 0 {
		t.Fatalf("timeouts %v %v %v %v, max header %d", hs.ReadHeaderTimeout, hs.ReadTimeout, hs.WriteTimeout, hs.IdleTimeout, hs.MaxHeaderBytes)
	}
}

// Names are text on every page, never markup: the dashboard escapes a
// monitor named like a script in its card, its chart's title and its page.
func TestDashboardEscapes(t *testing.T) {
	ts := newTestServer(t, dbtest.SQLite(t), server.Options{})
	name := `<script>alert("x")</script>`
	id := ts.createMonitor(t, name, map[string]any{"chunk_size": 5})
	ts.call(t, "POST", fmt.Sprintf("/api/v1/monitors/%d/rows", id), rowsBody(genRows(12, 0, 1, "r", time.Time{}), false), nil)
	for _, p := range []string{"/", fmt.Sprintf("/monitors/%d", id)} {
		code, raw := ts.call(t, "GET", p, nil, nil)
		if code != 200 || strings.Contains(string(raw), "<script>") || !strings.Contains(string(raw), "&lt;script&gt;") {
			t.Errorf("GET %s: %d, raw script tag or no escaped name", p, code)
		}
	}
}
