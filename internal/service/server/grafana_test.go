package server_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/genlens/genlens/internal/service/server"
	"github.com/genlens/genlens/internal/testkit/dbtest"
)

// grafanaExprs returns every PromQL expression of a Grafana dashboard:
// the panels' targets and the templating queries.
func grafanaExprs(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if s, ok := x.(string); ok && (k == "expr" || k == "definition") {
					out = append(out, s)
				}
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(doc)
	return out
}

// metricName finds the metric names of PromQL expressions (genlens's,
// the Go and process collectors', and up, which Prometheus adds).
var metricName = regexp.MustCompile(`\b(?:genlens|process|go)_[a-z0-9_]+\b|\bup\b`)

// Every metric deploy/grafana/genlens.json queries is one the server
// exports, so that no panel stays empty after a rename.
func TestGrafanaDashboardMetricsExported(t *testing.T) {
	ts := newTestServer(t, dbtest.SQLite(t), server.Options{})
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	id := ts.createMonitor(t, "m", map[string]any{"chunk_size": 40})
	rows := genRows(100, 0.5, 3, "r", t0)
	ts.call(t, "POST", fmt.Sprintf("/api/v1/monitors/%d/rows", id), rowsBody(rows, true), nil)
	ts.call(t, "POST", fmt.Sprintf("/api/v1/monitors/%d/labels", id), labelsBody(rows[:50]), nil)
	r := rand.New(rand.NewPCG(1, 2))
	ref := make([]float64, 100*2)
	for i := range ref {
		ref[i] = r.NormFloat64()
	}
	_, up := ts.uploadFile(t, "ref.npy", npyFile(t, []int{100, 2}, ref))
	var sel struct{ ID string }
	if code, raw := ts.call(t, "POST", "/api/v1/selections", fmt.Sprintf(`{"generators":["a","b"],"ref":%q}`, up["id"]), &sel); code != 201 {
		t.Fatalf("selection: %d %s", code, raw)
	}
	_, raw := ts.call(t, "GET", "/metrics", nil, nil)
	exported := map[string]bool{"up": true} // Prometheus's own, per target
	for _, m := range regexp.MustCompile(`(?m)^# TYPE (\S+) (\S+)$`).FindAllStringSubmatch(string(raw), -1) {
		exported[m[1]] = true
		if m[2] == "histogram" || m[2] == "summary" {
			for _, s := range []string{"_bucket", "_sum", "_count"} {
				exported[m[1]+s] = true
			}
		}
	}
	exprs := grafanaExprs(t, "../../../deploy/grafana/genlens.json")
	if len(exprs) < 10 {
		t.Fatalf("only %d queries in the dashboard", len(exprs))
	}
	var missing []string
	queried := map[string]bool{}
	for _, e := range exprs {
		for _, name := range metricName.FindAllString(e, -1) {
			queried[name] = true
			if !exported[name] && !slices.Contains(missing, name) {
				missing = append(missing, name)
			}
		}
	}
	if len(missing) > 0 {
		t.Errorf("deploy/grafana/genlens.json queries metrics the server does not export: %s", strings.Join(missing, ", "))
	}
	// The monitor metrics operators page on are all on the dashboard.
	for _, name := range []string{"genlens_monitor_alert", "genlens_monitor_estimated_mse", "genlens_monitor_out_of_reference",
		"genlens_monitor_reconstruction_error", "genlens_monitor_drift_alert", "genlens_monitor_recent_alerts", "genlens_job_queue_depth"} {
		if !queried[name] {
			t.Errorf("the dashboard does not show %s", name)
		}
	}
}
