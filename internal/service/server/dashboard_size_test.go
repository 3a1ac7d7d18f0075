package server_test

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/genlens/genlens/internal/service/server"
	"github.com/genlens/genlens/internal/testkit/dbtest"
)

// fineMonitor creates a monitor of chunk_size 1 holding n rows, a tenth
// of them labelled: n chunks.
func fineMonitor(t testing.TB, ts *testServer, n int) int64 {
	t.Helper()
	id := ts.createMonitor(t, "fine", map[string]any{"chunk_size": 1})
	rows := genRows(n, 0.3, 9, "r", time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	for s := 0; s < n; s += 5000 {
		part := rows[s:min(s+5000, n)]
		if code, raw := ts.call(t, "POST", fmt.Sprintf("/api/v1/monitors/%d/rows", id), rowsBody(part, true), nil); code != 200 {
			t.Fatalf("rows: %d %.200s", code, raw)
		}
		if code, raw := ts.call(t, "POST", fmt.Sprintf("/api/v1/monitors/%d/labels", id), labelsBody(part[:len(part)/10]), nil); code != 200 {
			t.Fatalf("labels: %d %.200s", code, raw)
		}
	}
	return id
}

// A monitor of many chunks (chunk_size 1) keeps the dashboard and its
// page small: the card draws the latest chunks, the monitor page one page
// of chunks, with links to the others; every chunk is reachable.
func TestDashboardOfManyChunksStaysSmall(t *testing.T) {
	ts := newTestServer(t, dbtest.SQLite(t), server.Options{})
	const n = 12000
	id := fineMonitor(t, ts, n)
	points := regexp.MustCompile(`<circle class="pt[^"]*" cx="[^"]*" cy="[^"]*" r="4"><title>`)
	rowsRe := regexp.MustCompile(`(?s)<table class="chunks">.*</table>`)
	code, dash := ts.call(t, "GET", "/", nil, nil)
	if code != 200 || len(dash) > 200<<10 || len(points.FindAll(dash, -1)) != 100 || !strings.Contains(string(dash), "the latest 100 of 12000 chunks") {
		t.Fatalf("dashboard: %d, %d bytes, %d points; want at most 200 KB and the latest 100 chunks", code, len(dash), len(points.FindAll(dash, -1)))
	}
	t.Logf("dashboard: %d bytes", len(dash))
	for _, c := range []struct {
		query       string
		first, last int
		links       []string
	}{
		{"", n - 250, n - 1, []string{`class="older" href="?page=2">older`}},
		{"?page=2", n - 500, n - 251, []string{`class="newer" href="?page=1">newer`, `class="older" href="?page=3">older`}},
		{"?page=48", 0, n - 47*250 - 1, []string{`class="newer" href="?page=47">newer`}},
		{"?page=1000", 0, n - 47*250 - 1, nil}, // past the last: the last
	} {
		code, page := ts.call(t, "GET", fmt.Sprintf("/monitors/%d%s", id, c.query), nil, nil)
		table := rowsRe.Find(page)
		rows := strings.Count(string(table), "<tr") - 1
		want := fmt.Sprintf("chunks %d to %d of %d", c.first, c.last, n)
		if code != 200 || len(page) > 600<<10 || rows != c.last-c.first+1 || len(points.FindAll(page, -1)) != rows || !strings.Contains(string(page), want) {
			t.Errorf("page%s: %d, %d bytes, %d table rows, %d points; want at most 600 KB showing %s", c.query, code, len(page), rows, len(points.FindAll(page, -1)), want)
		}
		if !strings.Contains(string(table), fmt.Sprintf(`<td class="num">%d</td>`, c.first)) || !strings.Contains(string(table), fmt.Sprintf(`<td class="num">%d</td>`, c.last)) {
			t.Errorf("page%s: the table lacks chunk %d or %d", c.query, c.first, c.last)
		}
		t.Logf("monitor page%s: %d bytes", c.query, len(page))
		for _, l := range c.links {
			if !strings.Contains(string(page), l) {
				t.Errorf("page%s: no link %s", c.query, l)
			}
		}
	}
	if code, raw := ts.call(t, "GET", fmt.Sprintf("/monitors/%d?page=x", id), nil, nil); code != 400 {
		t.Errorf("page=x: %d %.200s, want 400", code, raw)
	}
}

// The dashboard card reads only its latest chunks' rows; what it draws
// for them is what the whole monitor's evaluation (GET .../chunks) gives:
// every estimate, band, alert, drift statistic.
func TestDashboardCardMatchesAllChunks(t *testing.T) {
	ts := newTestServer(t, dbtest.SQLite(t), server.Options{})
	id := ts.createMonitor(t, "m", map[string]any{"chunk_size": 7})
	rows := genRows(1500, 0, 3, "a", time.Time{})
	rows = append(rows, genRows(500, 1.2, 4, "b", time.Time{})...) // drifted: alerts and extrapolation
	if code, raw := ts.call(t, "POST", fmt.Sprintf("/api/v1/monitors/%d/rows", id), rowsBody(rows, false), nil); code != 200 {
		t.Fatalf("rows: %d %.200s", code, raw)
	}
	ts.call(t, "POST", fmt.Sprintf("/api/v1/monitors/%d/labels", id), labelsBody(rows[1700:1900]), nil)
	var all struct {
		Chunks []struct {
			Index               int
			N                   int
			EstimatedMSE        *float64 `json:"estimated_mse"`
			Lower, Upper        *float64
			EstimateLower       *float64 `json:"estimate_lower"`
			EstimateUpper       *float64 `json:"estimate_upper"`
			Alert               bool
			ReconstructionError *float64 `json:"reconstruction_error"`
			OutOfReference      *float64 `json:"out_of_reference"`
			Extrapolating       bool
		}
	}
	ts.call(t, "GET", fmt.Sprintf("/api/v1/monitors/%d/chunks", id), nil, &all)
	num := func(p *float64) string {
		if p == nil {
			return "–"
		}
		return strconv.FormatFloat(*p, 'g', 6, 64)
	}
	_, dash := ts.call(t, "GET", "/", nil, nil)
	est := regexp.MustCompile(`<title>chunk (\d+) \((\d+) rows[^)]*\): estimated MSE ([^ ]+) \[([^,]+), ([^\]]+)\](, ALERT)?</title>`).FindAllStringSubmatch(string(dash), -1)
	drift := regexp.MustCompile(`<title>chunk (\d+): reconstruction error ([^ ]+) \[[^\]]*\](?:, DRIFT)?, ([0-9.]+)% of rows out of reference</title>`).FindAllStringSubmatch(string(dash), -1)
	extrap := regexp.MustCompile(`<circle class="extrap(?: thin)?"[^>]*><title>chunk (\d+):`).FindAllStringSubmatch(string(dash), -1)
	if len(all.Chunks) != 286 || len(est) != 100 || len(drift) != 100 || len(extrap) == 0 {
		t.Fatalf("%d chunks; the card draws %d estimates, %d drift points, %d extrapolations; want 286, 100, 100, some", len(all.Chunks), len(est), len(drift), len(extrap))
	}
	alerts := 0
	for k, m := range est {
		c := all.Chunks[len(all.Chunks)-100+k]
		got := strings.Join(m[1:], " ")
		want := strings.Join([]string{strconv.Itoa(c.Index), strconv.Itoa(c.N), num(c.EstimatedMSE), num(c.EstimateLower), num(c.EstimateUpper), map[bool]string{true: ", ALERT"}[c.Alert]}, " ")
		if got != want {
			t.Errorf("card point %d: %q, the chunks' %q", k, got, want)
		}
		if c.Alert {
			alerts++
		}
		d := drift[k]
		if d[1] != strconv.Itoa(c.Index) || d[2] != num(c.ReconstructionError) || d[3] != strconv.FormatFloat(100**c.OutOfReference, 'f', 1, 64) {
			t.Errorf("card drift point %d: %q, the chunks' %d %s %v", k, d[1:], c.Index, num(c.ReconstructionError), *c.OutOfReference)
		}
	}
	nExtrap := 0
	for _, c := range all.Chunks[len(all.Chunks)-100:] {
		if c.Extrapolating {
			nExtrap++
		}
	}
	if alerts == 0 || nExtrap != len(extrap) {
		t.Errorf("%d alerts (want some); %d extrapolating chunks drawn, %d in the chunks", alerts, len(extrap), nExtrap)
	}
}

// In a browser, a monitor page of many chunks draws one page of them,
// its table lists the same, and the "older" link leads to the next page.
func TestManyChunksInBrowser(t *testing.T) {
	bin := chromium(t)
	if testing.Short() {
		t.Skip("browser test skipped in -short mode")
	}
	ts := newTestServer(t, dbtest.SQLite(t), server.Options{})
	id := fineMonitor(t, ts, 3000)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin), chromedp.UserDataDir(t.TempDir()),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.NoFirstRun, chromedp.WindowSize(1440, 900))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	count := func(sel string) int {
		return run(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll('`+sel+`').length`))
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/"), chromedp.WaitVisible(chromedp.CSS("section.monitor svg.chart"))); err != nil {
		t.Fatal(err)
	}
	if n := count("section.monitor svg.chart > circle.pt"); n != 100 {
		t.Errorf("dashboard card draws %d chunks, want the latest 100", n)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(fmt.Sprintf("%s/monitors/%d", ts.URL, id)), chromedp.WaitVisible(chromedp.CSS("svg.chart"))); err != nil {
		t.Fatal(err)
	}
	pager := run(t, ctx, chromedp.Text(chromedp.CSS("p.pager")))
	if pts, rows := count("svg.chart > circle.pt"), count("table.chunks tr")-1; pts != 250 || rows != 250 || !strings.HasPrefix(pager, "chunks 2750 to 2999 of 3000 (page 1 of 12)") {
		t.Errorf("monitor page: %d points, %d table rows, pager %q; want 250, 250, chunks 2750 to 2999 of 3000", pts, rows, pager)
	}
	writeShot(t, artifactDir(t), "monitor-paged.png", run(t, ctx, chromedp.CaptureScreenshot()))
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("p.pager a.older")), chromedp.WaitVisible(chromedp.CSS("svg.chart"))); err != nil {
		t.Fatal(err)
	}
	loc := run(t, ctx, chromedp.Location())
	pager = run(t, ctx, chromedp.Text(chromedp.CSS("p.pager")))
	first := run(t, ctx, chromedp.Text(chromedp.CSS("table.chunks tr:nth-child(2) td")))
	if !strings.HasSuffix(loc, "?page=2") || !strings.HasPrefix(pager, "chunks 2500 to 2749 of 3000 (page 2 of 12)") || first != "2500" || count("svg.chart > circle.pt") != 250 {
		t.Errorf("after older: %s, pager %q, first row chunk %q", loc, pager, first)
	}
}

// BenchmarkDashboardManyChunks renders the dashboard and a monitor's
// first and oldest pages for 100,000 rows in chunks of one row: the
// dashboard reads only its card's latest chunks, the oldest page all of
// them.
//
//	go test -run '^$' -bench DashboardManyChunks -benchtime 5x ./server/
func BenchmarkDashboardManyChunks(b *testing.B) {
	ts := newTestServer(b, dbtest.SQLite(b), server.Options{})
	const n = 100000
	id := fineMonitor(b, ts, n)
	for _, c := range []struct{ name, path string }{
		{"dashboard", "/"}, {"first-page", fmt.Sprintf("/monitors/%d", id)}, {"oldest-page", fmt.Sprintf("/monitors/%d?page=%d", id, (n+249)/250)},
	} {
		b.Run(c.name, func(b *testing.B) {
			var size int
			for b.Loop() {
				code, raw := ts.call(b, "GET", c.path, nil, nil)
				if code != 200 {
					b.Fatalf("%d %.200s", code, raw)
				}
				size = len(raw)
			}
			b.ReportMetric(float64(size), "bytes/page")
		})
	}
}

// GET .../chunks pages with ?limit (and ?before): walking from the newest
// page back by next_before visits every chunk once, in order, with the
// same documents the unpaged answer holds; without limit every chunk comes
// back, as before paging existed.
func TestChunksPaged(t *testing.T) {
	ts := newTestServer(t, dbtest.SQLite(t), server.Options{})
	const n = 23
	id := fineMonitor(t, ts, n)
	type doc struct {
		TotalChunks int  `json:"total_chunks"`
		NextBefore  *int `json:"next_before"`
		Chunks      []map[string]any
	}
	var all doc
	if code, raw := ts.call(t, "GET", fmt.Sprintf("/api/v1/monitors/%d/chunks", id), nil, &all); code != 200 || len(all.Chunks) != n || all.TotalChunks != n || all.NextBefore != nil {
		t.Fatalf("unpaged: %d, %d chunks of %d, next %v: %.200s", code, len(all.Chunks), all.TotalChunks, all.NextBefore, raw)
	}
	var walked []map[string]any
	query := "?limit=5"
	for pages := 0; ; pages++ {
		if pages > n {
			t.Fatal("the walk does not end")
		}
		var p doc
		if code, raw := ts.call(t, "GET", fmt.Sprintf("/api/v1/monitors/%d/chunks%s", id, query), nil, &p); code != 200 || p.TotalChunks != n || len(p.Chunks) > 5 {
			t.Fatalf("%s: %d, %d chunks of %d: %.200s", query, code, len(p.Chunks), p.TotalChunks, raw)
		}
		walked = append(p.Chunks, walked...)
		if p.NextBefore == nil {
			if pages != 4 { // 23 = 3 + 4 × 5
				t.Errorf("%d pages, want 5", pages+1)
			}
			break
		}
		if got := int(p.Chunks[0]["index"].(float64)); got != *p.NextBefore {
			t.Errorf("%s: next_before %d, first chunk on the page %d", query, *p.NextBefore, got)
		}
		query = fmt.Sprintf("?limit=5&before=%d", *p.NextBefore)
	}
	if fmt.Sprint(walked) != fmt.Sprint(all.Chunks) {
		t.Error("the pages walked differ from the unpaged chunks")
	}
	for _, q := range []string{"?limit=0", "?limit=x", "?limit=10001", "?before=3", "?limit=2&before=-1"} {
		if code, raw := ts.call(t, "GET", fmt.Sprintf("/api/v1/monitors/%d/chunks%s", id, q), nil, nil); code != 400 {
			t.Errorf("%s: %d %.200s, want 400", q, code, raw)
		}
	}
}
