package server_test

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/genlens/genlens/internal/service/server"
	"github.com/genlens/genlens/internal/store/records"
)

// The dashboard's LLM panel in a real browser: one point per scored
// request, the most uncertain of the last day listed highest first with
// their answers escaped, no console errors; a screenshot is kept.
func TestLLMPanelInBrowser(t *testing.T) {
	bin := chromium(t)
	if testing.Short() {
		t.Skip("browser test skipped in -short mode")
	}
	now := time.Now().UTC()
	ts, _, _ := newProxy(t, server.Options{Token: "tok-tok-tok-tok-tok", Now: func() time.Time { return now }})
	ctx := context.Background()
	scored := 0
	for i := range 120 {
		u := -0.6 + 0.3*math.Sin(float64(i)/9) + 0.002*float64(i) // kernel entropy lies in [-1, 0]
		r := records.LLMRequest{Time: now.Add(time.Duration(i-120) * 7 * time.Minute), Model: []string{"llama-3-8b", "qwen2.5-7b"}[i%2],
			MessagesHash: fmt.Sprintf("%064d", i), Answer: fmt.Sprintf("answer %d <script>alert(1)</script>", i), Status: 200,
			Score: "kernel-entropy", Uncertainty: u, Samples: 5, Stream: i%5 == 0}
		if i%17 == 0 {
			r.Uncertainty, r.Status, r.Error = math.NaN(), 502, "upstream: connection refused"
		} else {
			scored++
		}
		if err := ts.db.InsertLLMRequest(ctx, &r); err != nil {
			t.Fatal(err)
		}
	}
	// And one through the proxy itself.
	if resp, b := post(t, ts.URL, "tok-tok-tok-tok-tok", chatBody); resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	ts.waitRequests(t, "?limit=1000", 121)
	scored++

	bctx, cancel := browser(t, bin)
	defer cancel()
	var mu sync.Mutex
	var problems []string
	go func() {
		for m, err := range chromedp.Console(bctx) {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.Type == chromedp.ConsoleWarning || m.IsException() {
				mu.Lock()
				problems = append(problems, m.String())
				mu.Unlock()
			}
		}
	}()
	err := chromedp.Do(bctx,
		chromedp.Navigate(ts.URL+"/"),
		chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SendKeys(chromedp.ID("token"), "tok-tok-tok-tok-tok"),
		chromedp.Submit(chromedp.ID("token")),
		chromedp.WaitVisible(chromedp.CSS("section.llm svg.chart")),
	)
	if err != nil {
		t.Fatal(err)
	}
	points := run(t, bctx, chromedp.Evaluate[int](`document.querySelectorAll('section.llm svg.chart > circle.pt').length`))
	rows := run(t, bctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('table.llm tr td.num')].map(td => td.textContent)`))
	answer := run(t, bctx, chromedp.Text(chromedp.CSS("table.llm td.answer")))
	scripts := run(t, bctx, chromedp.Evaluate[int](`document.querySelectorAll('section.llm script').length`))
	el, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	writeShot(t, artifactDir(t), "dashboard-llm.png", el)
	if points != scored {
		t.Errorf("%d points, want one per scored request (%d)", points, scored)
	}
	if len(rows) != 10 {
		t.Errorf("%d most uncertain rows, want 10", len(rows))
	}
	for i := 1; i < len(rows); i++ {
		a, errA := strconv.ParseFloat(rows[i-1], 64)
		b, errB := strconv.ParseFloat(rows[i], 64)
		if errA != nil || errB != nil || b > a {
			t.Errorf("most uncertain not highest first: %v", rows)
			break
		}
	}
	if !strings.Contains(answer, "<script>") || scripts != 0 {
		t.Errorf("answer %q: want the text shown escaped, %d script elements", answer, scripts)
	}
	time.Sleep(200 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if len(problems) > 0 {
		t.Errorf("browser console:\n%s", strings.Join(problems, "\n"))
	}
}

// browser starts a headless Chromium as TestDashboardInBrowser does.
func browser(t *testing.T, bin string) (context.Context, context.CancelFunc) {
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin), chromedp.UserDataDir(t.TempDir()),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.NoFirstRun, chromedp.WindowSize(1440, 900))
	actx, c1 := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, c2 := chromedp.NewContext(actx)
	ctx, c3 := context.WithTimeout(ctx, 90*time.Second)
	if err := chromedp.Do(ctx); err != nil {
		c3()
		c2()
		c1()
		t.Fatal(err)
	}
	return ctx, func() { c3(); c2(); c1() }
}
