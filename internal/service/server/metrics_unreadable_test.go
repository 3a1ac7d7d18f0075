package server_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/genlens/genlens/internal/service/server"
	"github.com/genlens/genlens/internal/store/records"
)

// lockedBuffer is a log destination safe for the server's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// A monitor whose stored check model does not decode (a row written
// around the API, or by a version that accepted what this one refuses)
// must not spoil the scrape: /metrics answers 200 with a body Prometheus
// parses and the other monitors' series; the broken one has no series
// but genlens_monitor_unreadable 1, and is logged once, not per scrape.
func TestMetricsSkipUnreadableMonitor(t *testing.T) {
	var logs lockedBuffer
	ts := newTestServer(t, t.TempDir()+"/m.db", server.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	ts.createMonitor(t, "good", map[string]any{"chunk_size": 10})
	for _, m := range []*records.Monitor{
		{Name: "broken", Model: []byte(`{"not": "a model"}`), ChunkSize: 10},
		{Name: "garbage", Model: []byte("\x00\x01 not even JSON"), ChunkSize: 10},
	} {
		if err := ts.db.CreateMonitor(context.Background(), m); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]float64{"good": 0, "broken": 1, "garbage": 1}
	for scrape := 0; scrape < 3; scrape++ {
		resp, err := ts.Client().Get(ts.URL + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		p := expfmt.NewTextParser(model.LegacyValidation)
		fams, perr := p.TextToMetricFamilies(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || perr != nil {
			t.Fatalf("scrape %d: status %d, parse error %v", scrape, resp.StatusCode, perr)
		}
		for _, name := range []string{"genlens_monitor_rows", "genlens_monitor_threshold_upper"} {
			f := fams[name]
			if f == nil || len(f.Metric) != 1 || f.Metric[0].Label[0].GetValue() != "good" {
				t.Fatalf("scrape %d: %s = %v; want the good monitor's series only", scrape, name, f)
			}
		}
		got := map[string]float64{}
		if f := fams["genlens_monitor_unreadable"]; f != nil {
			for _, m := range f.Metric {
				got[m.Label[0].GetValue()] = m.GetGauge().GetValue()
			}
		}
		if len(got) != len(want) || got["good"] != 0 || got["broken"] != 1 || got["garbage"] != 1 {
			t.Fatalf("scrape %d: genlens_monitor_unreadable = %v; want %v", scrape, got, want)
		}
	}
	for _, name := range []string{"broken", "garbage"} {
		if n := strings.Count(logs.String(), "monitor="+name); n != 1 {
			t.Errorf("monitor %s logged %d times over 3 scrapes; want once:\n%s", name, n, logs.String())
		}
	}
}
