package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/genlens/genlens/internal/service/server"
	"github.com/genlens/genlens/internal/store"
	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/job/msejob"
)

// opRow is a row of synthetic operational data: a regression problem
// whose deployed model f is biased growing with x, as in the MSE paper's
// synthetic relations, with a feature of pure noise.
type opRow struct {
	ID       string
	Time     time.Time
	X, Noise float64
	Pred, Y  float64
}

func genRows(n int, shift float64, seed uint64, prefix string, t0 time.Time) []opRow {
	r := rand.New(rand.NewPCG(seed, 7))
	out := make([]opRow, n)
	for i := range out {
		x := r.NormFloat64() + shift
		v := 3*x + 5
		u := v * math.Sin(v)
		out[i] = opRow{ID: fmt.Sprintf("%s%d", prefix, i), Time: t0.Add(time.Duration(i) * 37 * time.Minute),
			X: x, Noise: r.NormFloat64(), Pred: u + 0.5*x, Y: u + 0.3*(1+math.Max(0, v))*r.NormFloat64()}
	}
	return out
}

// csv renders rows as the table `genlens mse estimate` reads; targets of
// rows from labelled on are empty.
func csvOf(rows []opRow, labelled int) []byte {
	var b bytes.Buffer
	b.WriteString("ts,x,noise_feature,pred,y\n")
	for i, r := range rows {
		y := ""
		if i < labelled {
			y = fmt.Sprint(r.Y)
		}
		fmt.Fprintf(&b, "%s,%v,%v,%v,%s\n", r.Time.Format(time.RFC3339), r.X, r.Noise, r.Pred, y)
	}
	return b.Bytes()
}

var (
	modelOnce sync.Once
	modelJSON []byte
	modelErr  error
)

// checkModel returns the JSON of a check model fitted by msejob.Fit (the
// code behind `genlens mse fit`) on 400 labelled reference rows, with the command line's defaults.
func checkModel(t testing.TB) []byte {
	t.Helper()
	modelOnce.Do(func() {
		fsys := fstest.MapFS{"ref.csv": {Data: csvOf(genRows(400, 0, 1, "ref", time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), 400)}}
		req := msejob.NewFitRequest()
		req.Train, req.Target, req.Prediction, req.Features, req.Model = "ref.csv", "y", "pred", []string{"x", "noise_feature"}, "check.json"
		res, err := msejob.Fit(context.Background(), job.Env{FS: fsys}, req)
		if err != nil {
			modelErr = err
			return
		}
		var b bytes.Buffer
		modelErr = res.WriteModel(&b)
		modelJSON = b.Bytes()
	})
	if modelErr != nil {
		t.Fatal(modelErr)
	}
	return modelJSON
}

type testServer struct {
	*httptest.Server
	srv   *server.Server
	db    *store.DB
	token string
}

func newTestServer(t testing.TB, dsn string, opts server.Options) *testServer {
	t.Helper()
	db, err := store.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	opts.Store = db
	srv, err := server.New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		ts.Close()
		srv.Close(context.Background())
		db.Close()
	})
	return &testServer{Server: ts, srv: srv, db: db, token: opts.Token}
}

// call sends body (marshalled unless []byte or string) and decodes the
// JSON response into out when not nil; it returns the status and the raw
// response.
func (ts *testServer) call(t testing.TB, method, path string, body any, out any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	case string:
		rd = strings.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, ts.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if ts.token != "" {
		req.Header.Set("Authorization", "Bearer "+ts.token)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if out != nil && len(raw) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: %d %s: %v", method, path, resp.StatusCode, raw, err)
		}
	}
	return resp.StatusCode, raw
}

// rowsBody is the JSON of POST .../rows for rows.
func rowsBody(rows []opRow, withTime bool) map[string]any {
	out := make([]map[string]any, len(rows))
	for i, r := range rows {
		m := map[string]any{"id": r.ID, "features": map[string]float64{"x": r.X, "noise_feature": r.Noise}, "prediction": r.Pred}
		if withTime {
			m["timestamp"] = r.Time.Format(time.RFC3339Nano)
		}
		out[i] = m
	}
	return map[string]any{"rows": out}
}

func labelsBody(rows []opRow) map[string]any {
	out := make([]map[string]any, len(rows))
	for i, r := range rows {
		out[i] = map[string]any{"id": r.ID, "target": r.Y}
	}
	return map[string]any{"labels": out}
}

// createMonitor creates a monitor and returns its id.
func (ts *testServer) createMonitor(t testing.TB, name string, extra map[string]any) int64 {
	t.Helper()
	body := map[string]any{"name": name, "model": json.RawMessage(checkModel(t))}
	for k, v := range extra {
		body[k] = v
	}
	var out struct {
		ID   int64  `json:"id"`
		Name string `json:"name"`
	}
	if code, raw := ts.call(t, "POST", "/api/v1/monitors", body, &out); code != 201 || out.Name != name || out.ID == 0 {
		t.Fatalf("create monitor: %d %s", code, raw)
	}
	return out.ID
}

type chunk struct {
	Index         int      `json:"index"`
	Start         int      `json:"start"`
	End           int      `json:"end"`
	N             int      `json:"n"`
	Rows          int      `json:"rows"`
	Period        string   `json:"period"`
	EstimatedMSE  *float64 `json:"estimated_mse"`
	SamplingError *float64 `json:"sampling_error"`
	Lower         *float64 `json:"lower"`
	Upper         *float64 `json:"upper"`
	SELower       *float64 `json:"se_lower"`
	SEUpper       *float64 `json:"se_upper"`
	Alert         bool     `json:"alert"`
	RealizedMSE   *float64 `json:"realized_mse"`
	Labelled      *int     `json:"labelled"`
	Complete      *bool    `json:"complete"`
	To            string   `json:"to"`
	// Extrapolation and drift.
	OutOfReference      *float64 `json:"out_of_reference"`
	Extrapolating       *bool    `json:"extrapolating"`
	Outside             map[string]int
	ReconstructionError *float64 `json:"reconstruction_error"`
	DriftLower          *float64 `json:"drift_lower"`
	DriftUpper          *float64 `json:"drift_upper"`
	DriftAlert          *bool    `json:"drift_alert"`
	Features            map[string]struct {
		KS *float64 `json:"ks"`
		P  *float64 `json:"p"`
	} `json:"features"`
}

type chunks struct {
	Rows           int      `json:"rows"`
	LowerThreshold *float64 `json:"lower_threshold"`
	UpperThreshold *float64 `json:"upper_threshold"`
	Chunks         []chunk  `json:"chunks"`
}
