package server_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/genlens/genlens/internal/service/server"
	"github.com/genlens/genlens/internal/testkit/dbtest"
)

// chromium returns the path of a Chromium or Chrome binary, or skips.
func chromium(t *testing.T) string {
	for _, name := range []string{"/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no chromium or chrome binary: the browser test needs one (.ci/run installs Debian's chromium)")
	return ""
}

// artifactDir is where screenshots go: $GENLENS_ARTIFACTS when set (CI
// keeps it), else the test's temporary directory.
func artifactDir(t *testing.T) string {
	if d := os.Getenv("GENLENS_ARTIFACTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}

// The dashboard in a real browser: the pages load with their stylesheet,
// every monitor's chart renders its points, band, thresholds and alerts,
// the console stays free of errors (a Content-Security-Policy violation
// would be one), and a screenshot of each page is kept.
func TestDashboardInBrowser(t *testing.T) {
	bin := chromium(t)
	if testing.Short() {
		t.Skip("browser test skipped in -short mode")
	}
	ts := newTestServer(t, dbtest.SQLite(t), server.Options{Token: "tok-tok-tok-tok-tok"})
	t0 := time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC) // all days past
	sized := ts.createMonitor(t, "house-prices", map[string]any{"chunk_size": 60})
	stable := genRows(300, 0, 11, "a", t0)
	drift := genRows(190, 1.2, 12, "b", t0.Add(300*37*time.Minute))
	all := append(stable, drift...)
	ts.call(t, "POST", fmt.Sprintf("/api/v1/monitors/%d/rows", sized), rowsBody(all, true), nil)
	ts.call(t, "POST", fmt.Sprintf("/api/v1/monitors/%d/labels", sized), labelsBody(all[:200]), nil)
	daily := ts.createMonitor(t, "demand-daily", map[string]any{"period": "day"})
	ts.call(t, "POST", fmt.Sprintf("/api/v1/monitors/%d/rows", daily), rowsBody(all, true), nil)
	ts.createMonitor(t, "empty", map[string]any{"chunk_size": 100})
	// A finished job, a failed one, and an online selection after a few
	// steps, for the other two sections.
	var sub struct{ ID string }
	ts.call(t, "POST", "/api/v1/jobs/mse-bench", `{"dataset":"synthetic-a","trials":2,"methods":["naive","kstar"]}`, &sub)
	if j := ts.waitJob(t, sub.ID, 60*time.Second); j.Status != "succeeded" {
		t.Fatalf("job: %+v", j)
	}
	_, bad := ts.uploadFile(t, "bad.npy", []byte("not an array"))
	ts.call(t, "POST", "/api/v1/jobs/stats", `{"in":"`+bad["id"].(string)+`"}`, &sub)
	ts.waitJob(t, sub.ID, 30*time.Second)
	r := rand.New(rand.NewPCG(5, 6))
	ref := make([]float64, 200*3)
	for i := range ref {
		ref[i] = r.NormFloat64()
	}
	_, up := ts.uploadFile(t, "ref.npy", npyFile(t, []int{200, 3}, ref))
	var sel struct{ ID string }
	ts.call(t, "POST", "/api/v1/selections", fmt.Sprintf(`{"name":"which generator","generators":["diffusion-a","gan-b"],"ref":%q}`, up["id"]), &sel)
	for range 12 {
		var next struct{ Generator string }
		ts.call(t, "GET", "/api/v1/selections/"+sel.ID+"/next", nil, &next)
		rows := make([][]float64, 8)
		for i := range rows {
			rows[i] = []float64{map[string]float64{"gan-b": 2}[next.Generator] + r.NormFloat64(), r.NormFloat64(), r.NormFloat64()}
		}
		if code, raw := ts.call(t, "POST", "/api/v1/selections/"+sel.ID+"/samples", map[string]any{"generator": next.Generator, "features": rows}, nil); code != 200 {
			t.Fatalf("samples: %d %s", code, raw)
		}
	}

	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin), chromedp.UserDataDir(t.TempDir()),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.NoFirstRun, chromedp.WindowSize(1440, 900))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 90*time.Second)
	defer cancel()

	// Collect the console from the first page on: calls of the console
	// API, uncaught exceptions and the browser's log (where a refused
	// resource or a Content-Security-Policy violation shows).
	if err := chromedp.Do(ctx); err != nil { // start the browser
		t.Fatal(err)
	}
	var mu sync.Mutex
	var problems []string
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.Type == chromedp.ConsoleWarning || m.IsException() {
				mu.Lock()
				problems = append(problems, fmt.Sprintf("%s (%s:%d)", m, m.URL, m.Line))
				mu.Unlock()
			}
		}
	}()

	dir := artifactDir(t)
	// Sign in through the form, as a user would: the cookie then carries
	// the token.
	err := chromedp.Do(ctx,
		chromedp.Navigate(ts.URL+"/"),
		chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SendKeys(chromedp.ID("token"), "tok-tok-tok-tok-tok"),
		chromedp.Submit(chromedp.ID("token")),
		chromedp.WaitVisible(chromedp.CSS("section.monitor svg.chart")),
	)
	if err != nil {
		t.Fatal(err)
	}
	title := run(t, ctx, chromedp.Title())
	count := func(sel string) int {
		return run(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll('`+sel+`').length`))
	}
	points, alerts := count("section.monitor svg.chart > circle.pt"), count("section.monitor svg.chart > circle.pt.alert")
	thresholds, bands := count("section.monitor svg.chart > line.threshold"), count("section.monitor svg.chart > polygon.band")
	hollow := count("section.monitor svg.chart > circle.pt.incomplete")
	driftPanels, extrapolating := count("section.monitor svg.chart.drift"), count("section.monitor svg.chart > circle.extrap")
	jobRows, selections := count("table.jobs tr")-1, count("section.selection")
	fillOpacity := run(t, ctx, chromedp.Evaluate[string](`getComputedStyle(document.querySelector('svg.chart polygon.band')).fillOpacity`))
	writeShot(t, dir, "dashboard.png", run(t, ctx, chromedp.FullScreenshot(100)))
	// 490 rows by 60: 9 chunks (the last incomplete); by day: 13 days.
	if title != "Dashboard · genlens" || points != 9+13 || alerts == 0 || thresholds != 4 || bands != 2 || hollow != 1 {
		t.Errorf("dashboard %q: %d points (want 22), %d alerts (want some), %d threshold lines (want 4), %d bands (want 2), %d hollow (want 1)",
			title, points, alerts, thresholds, bands, hollow)
	}
	// The drifted rows (shifted by 1.2 sd) leave the reference range often
	// enough for some chunks to be marked (at 0.9 sd, 2% of them do: as
	// many as chunks drawn like 400 reference rows may by chance, which
	// the range limit allows); both monitors with rows have a drift
	// panel.
	if driftPanels != 2 || extrapolating == 0 {
		t.Errorf("dashboard: %d drift panels (want 2), %d extrapolating chunks marked (want some)", driftPanels, extrapolating)
	}
	if jobRows != 2 || selections != 1 {
		t.Errorf("dashboard lists %d jobs and %d selections, want 2 and 1", jobRows, selections)
	}
	if fillOpacity != "0.15" {
		t.Errorf("band fill-opacity %q: the stylesheet did not apply", fillOpacity)
	}

	err = chromedp.Do(ctx,
		chromedp.Navigate(fmt.Sprintf("%s/monitors/%d", ts.URL, sized)),
		chromedp.WaitVisible(chromedp.CSS("svg.chart")),
	)
	if err != nil {
		t.Fatal(err)
	}
	heading := run(t, ctx, chromedp.Text(chromedp.CSS("main h2")))
	rowsShown := count("table.chunks tr") - 1
	writeShot(t, dir, "monitor.png", run(t, ctx, chromedp.FullScreenshot(100)))
	if heading != "house-prices" || rowsShown != 9 {
		t.Errorf("monitor page %q with %d chunk rows, want house-prices with 9", heading, rowsShown)
	}
	time.Sleep(200 * time.Millisecond) // let the last console events arrive
	mu.Lock()
	defer mu.Unlock()
	if len(problems) > 0 {
		t.Errorf("browser console:\n%s", strings.Join(problems, "\n"))
	}
}

func run[T any](t *testing.T, ctx context.Context, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func writeShot(t *testing.T, dir, name string, b []byte) {
	t.Helper()
	if len(b) < 1000 {
		t.Fatalf("screenshot %s: %d bytes", name, len(b))
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", p)
}
