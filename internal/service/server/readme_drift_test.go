package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/genlens/genlens/internal/service/server"
	"github.com/genlens/genlens/internal/testkit/dbtest"
	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/job/msejob"
)

// TestReadmeDriftExample replays the README's serve tour: a check model
// fitted on 500 reference rows of x0, x1 ~ N(0, 1), a monitor of 100-row
// chunks, 650 rows of traffic whose x0 shifts by 2 from row 300 on, and
// the labels of the first 250 rows. Chunks 3 to 5 alert and extrapolate,
// chunks 0 to 2 do neither, and chunk 6 (50 rows) is incomplete: the
// dashboard's badge, its summary line, /metrics and GET /monitors must
// show the alert of the latest complete chunk 5, not hide it behind
// chunk 6.
func TestReadmeDriftExample(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	f := func(x0, x1 float64) float64 { return 2*x0 + math.Sin(3*x1) }
	var ref bytes.Buffer
	ref.WriteString("x0,x1,pred,y\n")
	for range 500 {
		x0, x1 := r.NormFloat64(), r.NormFloat64()
		m := f(x0, x1)
		fmt.Fprintf(&ref, "%v,%v,%v,%v\n", x0, x1, m+0.2*x0, m+0.4*(1+x0*x0)*r.NormFloat64())
	}
	req := msejob.NewFitRequest()
	req.Train, req.Target, req.Prediction, req.Model = "reference.csv", "y", "pred", "check.json"
	fit, err := msejob.Fit(context.Background(), job.Env{FS: fstest.MapFS{"reference.csv": {Data: ref.Bytes()}}}, req)
	if err != nil {
		t.Fatal(err)
	}
	var model bytes.Buffer
	if err := fit.WriteModel(&model); err != nil {
		t.Fatal(err)
	}
	ts := newTestServer(t, dbtest.SQLite(t), server.Options{})
	var created struct{ ID int64 }
	if code, raw := ts.call(t, "POST", "/api/v1/monitors", map[string]any{"name": "prices", "chunk_size": 100, "model": json.RawMessage(model.Bytes())}, &created); code != 201 {
		t.Fatalf("create: %d %s", code, raw)
	}
	var rows, labels []map[string]any
	for i := range 650 {
		x0, x1 := r.NormFloat64(), r.NormFloat64()
		if i >= 300 {
			x0 += 2
		}
		m := f(x0, x1)
		id := fmt.Sprintf("r%d", i)
		rows = append(rows, map[string]any{"id": id, "features": map[string]float64{"x0": x0, "x1": x1}, "prediction": m + 0.2*x0})
		if i < 250 {
			labels = append(labels, map[string]any{"id": id, "target": m + 0.4*(1+x0*x0)*r.NormFloat64()})
		}
	}
	base := fmt.Sprintf("/api/v1/monitors/%d", created.ID)
	if code, raw := ts.call(t, "POST", base+"/rows", map[string]any{"rows": rows}, nil); code != 200 {
		t.Fatalf("rows: %d %s", code, raw)
	}
	if code, raw := ts.call(t, "POST", base+"/labels", map[string]any{"labels": labels}, nil); code != 200 {
		t.Fatalf("labels: %d %s", code, raw)
	}

	var got chunks
	ts.call(t, "GET", base+"/chunks", nil, &got)
	if len(got.Chunks) != 7 || *got.Chunks[6].Complete {
		t.Fatalf("%d chunks, want 7 with the last incomplete", len(got.Chunks))
	}
	var ks0 []float64
	for i, c := range got.Chunks {
		shifted := i >= 3
		if c.Alert != shifted || *c.Extrapolating != shifted {
			t.Errorf("chunk %d: alert %v, extrapolating %v (out of reference %.2f); want both %v", i, c.Alert, *c.Extrapolating, *c.OutOfReference, shifted)
		}
		ks0 = append(ks0, *c.Features["x0"].KS)
	}
	// Drift rises with the shift: x0's KS statistic in every shifted
	// chunk is above every unshifted one's.
	if m := math.Max(ks0[0], math.Max(ks0[1], ks0[2])); ks0[3] <= m || ks0[4] <= m || ks0[5] <= m {
		t.Errorf("x0's KS statistic per chunk %v: not higher after the shift", ks0)
	}

	_, raw := ts.call(t, "GET", "/metrics", nil, nil)
	for _, want := range []string{
		`genlens_monitor_alert{monitor="prices"} 1`,
		`genlens_monitor_chunk_index{monitor="prices"} 5`,
		`genlens_monitor_recent_alerts{monitor="prices"} 3`,
		`genlens_monitor_recent_chunks{monitor="prices"} 6`,
		`genlens_monitor_incomplete_rows{monitor="prices"} 50`,
		`genlens_monitor_extrapolating{monitor="prices"} 1`,
	} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}

	var list struct {
		Monitors []struct {
			Summary struct {
				Latest       chunk `json:"latest_complete"`
				RecentChunks int   `json:"recent_chunks"`
				RecentAlerts int   `json:"recent_alerts"`
				Incomplete   chunk `json:"incomplete"`
			} `json:"summary"`
		} `json:"monitors"`
	}
	ts.call(t, "GET", "/api/v1/monitors", nil, &list)
	if s := list.Monitors[0].Summary; s.Latest.Index != 5 || !s.Latest.Alert || s.RecentAlerts != 3 || s.RecentChunks != 6 || s.Incomplete.Index != 6 || s.Incomplete.N != 50 || *s.Incomplete.Complete {
		t.Errorf("GET /monitors summary %+v: want latest complete chunk 5 alerting, 3 of 6 alerted, chunk 6 incomplete with 50 rows", s)
	}

	_, page := ts.call(t, "GET", "/", nil, nil)
	card := regexp.MustCompile(`(?s)<section class="card monitor".*?</section>`).Find(page)
	for _, want := range []string{
		`<span class="badge alert">alert</span>`,
		`latest complete chunk 5:`,
		`3 of the last 6 complete chunks alerted`,
		`chunk 6 is incomplete (50 rows so far)`,
		`<span class="badge extrapolating"`,
	} {
		if !bytes.Contains(card, []byte(want)) {
			t.Errorf("dashboard card lacks %q:\n%s", want, regexp.MustCompile(`<svg.*?</svg>`).ReplaceAll(card, nil))
		}
	}
	if bytes.Contains(card, []byte("within thresholds")) {
		t.Errorf("the dashboard says within thresholds while chunks 3 to 5 alert")
	}

	// Charts are never drawn larger than their design width (their width
	// attribute; the stylesheet only shrinks them to fit), so that their
	// 11 px labels read the same on the dashboard's cards and on a
	// monitor's page whatever the number of cards in a row.
	_, css := ts.call(t, "GET", "/static/style.css", nil, nil)
	rule := regexp.MustCompile(`(?m)^svg\.chart \{[^}]*\}`).Find(css)
	if rule == nil || regexp.MustCompile(`(^|[^-])width:\s*100%`).Match(rule) || !bytes.Contains(rule, []byte("max-width: 100%")) {
		t.Errorf("style.css's svg.chart rule %q stretches charts beyond their width attribute", rule)
	}
	// The card chart's legend fits its 560 px: the last label ends
	// before the right edge (at about 7 px a character of 11 px text).
	cardChart := regexp.MustCompile(`(?s)<svg class="chart" .*?</svg>`).Find(card)
	keys := regexp.MustCompile(`<text class="legend" x="(\d+)" y="\d+">([^<]*)</text>`).FindAllSubmatch(cardChart, -1)
	if len(keys) < 6 {
		t.Fatalf("card chart has %d legend labels, want 6", len(keys))
	}
	last := keys[len(keys)-1]
	var lastX int
	fmt.Sscan(string(last[1]), &lastX)
	if end := lastX + 7*len(last[2]); end > 560 {
		t.Errorf("card chart legend %q ends at about x=%d, past the chart's 560 px", last[2], end)
	}
	_, mpage := ts.call(t, "GET", fmt.Sprintf("/monitors/%d", created.ID), nil, nil)
	for _, p := range [][]byte{page, mpage} {
		for _, c := range regexp.MustCompile(`<svg class="chart[^"]*"[^>]*>`).FindAll(p, -1) {
			if !regexp.MustCompile(`viewBox="0 0 (\d+) \d+" width="(\d+)"`).Match(c) {
				t.Errorf("chart without a width attribute: %s", c)
			}
		}
	}
	// The MSE thresholds come from the reference's per-row losses, scaled
	// to the chunk size; the page says so, not "from N reference chunks".
	if !regexp.MustCompile(`thresholds \[[^\]]+\] for chunks of \d+ rows, from the reference's losses \(\d+ chunks' worth\)`).Match(mpage) {
		t.Errorf("monitor page does not say where its thresholds come from:\n%s", regexp.MustCompile(`<p class="meta">.*?</p>`).Find(mpage))
	}
	// Two independent features: the reconstruction error is 0 on every
	// reference chunk. The page says why instead of "thresholds [0, 0]".
	if bytes.Contains(mpage, []byte("thresholds [0, 0]")) || !bytes.Contains(mpage, []byte("reconstruction error 0 on every reference chunk")) {
		t.Errorf("monitor page does not explain the zero reconstruction error:\n%s", regexp.MustCompile(`(?s)<section class="card drift">.*?<svg`).Find(mpage))
	}
	// The shading of extrapolating chunks (3 to 6, the last one on the
	// plot's right edge) stays inside the plot: x from 64 to 1100-40.
	drift := regexp.MustCompile(`(?s)<svg class="chart drift".*?</svg>`).Find(mpage)
	cols := regexp.MustCompile(`<rect class="extrap-col" x="([0-9.]+)" y="\d+" width="([0-9.]+)"`).FindAllSubmatch(drift, -1)
	if len(cols) < 5 { // 4 chunks and the legend's swatch
		t.Fatalf("drift chart shades %d columns, want the 4 extrapolating chunks", len(cols)-1)
	}
	for _, c := range cols[:len(cols)-1] {
		var x, w float64
		fmt.Sscan(string(c[1]), &x)
		fmt.Sscan(string(c[2]), &w)
		if x < 64-1e-9 || x+w > 1060+1e-9 {
			t.Errorf("extrapolating column [%g, %g] runs outside the plot [64, 1060]", x, x+w)
		}
	}
}
