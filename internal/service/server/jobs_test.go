package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/internal/service/server"
	"github.com/genlens/genlens/internal/testkit/dbtest"
	"github.com/genlens/genlens/metric/frechet"
)

// newJobServer is a test server whose job queue polls and beats fast.
func newJobServer(t *testing.T, jo server.JobOptions) *testServer {
	t.Helper()
	if jo.DataDir == "" {
		jo.DataDir = t.TempDir()
	}
	jo.Heartbeat, jo.Poll = 50*time.Millisecond, 50*time.Millisecond
	return newTestServer(t, dbtest.SQLite(t), server.Options{Jobs: jo})
}

// npyFile renders an array as .npy bytes.
func npyFile(t testing.TB, shape []int, data []float64) []byte {
	t.Helper()
	p := filepath.Join(t.TempDir(), "a.npy")
	if err := dataio.WriteNPY(p, &dataio.Array{Shape: shape, Data: data}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// uploadFile posts data as a multipart upload and returns the status and
// the decoded answer.
func (ts *testServer) uploadFile(t testing.TB, name string, data []byte) (int, map[string]any) {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("file", name)
	fw.Write(data)
	mw.Close()
	req, _ := http.NewRequest("POST", ts.URL+"/api/v1/files", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	if ts.token != "" {
		req.Header.Set("Authorization", "Bearer "+ts.token)
	}
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

type jobDoc struct {
	ID       string `json:"id"`
	Kind     string `json:"kind"`
	Status   string `json:"status"`
	Progress struct{ Done, Total int }
	Request  json.RawMessage `json:"request"`
	Result   json.RawMessage `json:"result"`
	Error    *struct {
		Kind    string `json:"kind"`
		Message string `json:"message"`
	} `json:"error"`
	Artifacts []struct {
		Name, URL   string
		ContentType string `json:"content_type"`
		Size        int64
	} `json:"artifacts"`
}

func (ts *testServer) waitJob(t *testing.T, id string, timeout time.Duration) jobDoc {
	t.Helper()
	timeout *= slow
	deadline := time.Now().Add(timeout)
	for {
		var j jobDoc
		if code, raw := ts.call(t, "GET", "/api/v1/jobs/"+id, nil, &j); code != 200 {
			t.Fatalf("GET job: %d %s", code, raw)
		}
		switch j.Status {
		case "succeeded", "failed", "canceled":
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s still %s after %v", id, j.Status, timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestJobsAPI(t *testing.T) {
	ts := newJobServer(t, server.JobOptions{})
	r := rand.New(rand.NewPCG(1, 2))
	rows := make([]float64, 50*3)
	for i := range rows {
		rows[i] = r.NormFloat64()
	}
	code, up := ts.uploadFile(t, "real feats.npy", npyFile(t, []int{50, 3}, rows))
	if code != 201 || up["name"] != "real feats.npy" || up["size"].(float64) < 1200 {
		t.Fatalf("upload: %d %v", code, up)
	}
	id := up["id"].(string)
	if code, raw := ts.call(t, "GET", "/api/v1/files/"+id, nil, nil); code != 200 || !strings.Contains(string(raw), id) {
		t.Errorf("GET file: %d %s", code, raw)
	}

	var sub struct{ ID, Status, URL string }
	if code, raw := ts.call(t, "POST", "/api/v1/jobs/stats", `{"in":"`+id+`"}`, &sub); code != 202 || sub.ID == "" || sub.Status != "queued" {
		t.Fatalf("submit: %d %s", code, raw)
	}
	j := ts.waitJob(t, sub.ID, 30*time.Second)
	if j.Status != "succeeded" || j.Kind != "stats" || j.Error != nil || string(j.Request) != `{"in":"`+id+`"}` {
		t.Fatalf("job: %+v", j)
	}
	var res struct{ N, Dim int }
	if err := json.Unmarshal(j.Result, &res); err != nil || res.N != 50 || res.Dim != 3 {
		t.Errorf("result %s: %+v %v", j.Result, res, err)
	}
	if len(j.Artifacts) != 1 || j.Artifacts[0].Name != "stats.npz" || j.Artifacts[0].URL != "/api/v1/jobs/"+sub.ID+"/artifacts/stats.npz" {
		t.Fatalf("artifacts %+v", j.Artifacts)
	}
	resp, err := ts.Client().Get(ts.URL + j.Artifacts[0].URL)
	if err != nil {
		t.Fatal(err)
	}
	npz, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	st, err := frechet.ReadStatsFS(fstest.MapFS{"s.npz": {Data: npz}}, "s.npz")
	if resp.StatusCode != 200 || err != nil || st.Dim() != 3 || int64(len(npz)) != j.Artifacts[0].Size {
		t.Errorf("artifact: %d, %d bytes, %v", resp.StatusCode, len(npz), err)
	}
	if code, _ := ts.call(t, "GET", "/api/v1/jobs/"+sub.ID+"/artifacts/nope.csv", nil, nil); code != 404 {
		t.Errorf("missing artifact: %d", code)
	}
	var list struct{ Jobs []jobDoc }
	if code, _ := ts.call(t, "GET", "/api/v1/jobs?limit=5", nil, &list); code != 200 || len(list.Jobs) != 1 || list.Jobs[0].ID != sub.ID {
		t.Errorf("list: %d %+v", code, list)
	}

	// A bad input file is the job's failure, of kind input.
	_, bad := ts.uploadFile(t, "bad.npy", []byte("\x93NUMPY garbage"))
	ts.call(t, "POST", "/api/v1/jobs/stats", `{"in":"`+bad["id"].(string)+`"}`, &sub)
	if j := ts.waitJob(t, sub.ID, 30*time.Second); j.Status != "failed" || j.Error == nil || j.Error.Kind != "input" || !strings.Contains(j.Error.Message, bad["id"].(string)) {
		t.Errorf("bad input: %+v %+v", j, j.Error)
	}
}

func TestJobsAPIErrors(t *testing.T) {
	ts := newJobServer(t, server.JobOptions{MaxUploadBytes: 1000})
	_, up := ts.uploadFile(t, "x.npy", npyFile(t, []int{2, 2}, []float64{1, 2, 3, 4}))
	id := up["id"].(string)
	for _, c := range []struct {
		method, path, body string
		code               int
		field              string
	}{
		{"POST", "/api/v1/jobs/nope", `{}`, 404, ""},
		{"POST", "/api/v1/jobs/features", `{}`, 400, "input"},
		{"POST", "/api/v1/jobs/stats", `{"in":"` + id + `","bogus":1}`, 400, "bogus"},
		{"POST", "/api/v1/jobs/is", `{"probs":"` + id + `","splits":"x"}`, 400, "splits"},
		{"POST", "/api/v1/jobs/is", `{"probs":"` + id + `","splits":0}`, 400, "splits"},
		{"POST", "/api/v1/jobs/stats", `{"in":"/etc/passwd"}`, 400, "in"},
		{"POST", "/api/v1/jobs/stats", `{"in":"../` + id + `"}`, 400, "in"},
		{"POST", "/api/v1/jobs/hallucination-run", `{"backend":"openai","base_url":"http://10.0.0.1/v1","model":"m","context":"` + id + `","queries":"` + id + `"}`, 400, "base_url"},
		{"GET", "/api/v1/jobs/0123", "", 404, ""},
		{"DELETE", "/api/v1/jobs/0123", "", 404, ""},
		{"GET", "/api/v1/files/..%2F..%2Fetc%2Fpasswd", "", 404, ""},
	} {
		var e struct{ Error, Kind, Field string }
		code, raw := ts.call(t, c.method, c.path, c.body, &e)
		if code != c.code || e.Field != c.field || e.Error == "" {
			t.Errorf("%s %s %s: %d %s, want %d naming %q", c.method, c.path, c.body, code, raw, c.code, c.field)
		}
	}
	if code, out := ts.uploadFile(t, "big.npy", make([]byte, 1001)); code != 413 {
		t.Errorf("upload over the limit: %d %v", code, out)
	}
	if code, out := ts.uploadFile(t, "x.exe", []byte("MZ")); code != 400 || out["field"] != "file" {
		t.Errorf("upload of an unknown type: %d %v", code, out)
	}
	if code, raw := ts.call(t, "POST", "/api/v1/files", `{"file":"x"}`, nil); code != 400 {
		t.Errorf("JSON body to /files: %d %s", code, raw)
	}
}

func TestJobsAPICancel(t *testing.T) {
	ts := newJobServer(t, server.JobOptions{})
	var sub struct{ ID string }
	ts.call(t, "POST", "/api/v1/jobs/mse-bench", `{"dataset":"synthetic-a","trials":100000,"methods":["naive"]}`, &sub)
	deadline := time.Now().Add(20 * time.Second * slow)
	for {
		var j jobDoc
		ts.call(t, "GET", "/api/v1/jobs/"+sub.ID, nil, &j)
		if j.Status == "running" && j.Progress.Done > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("job never ran: %+v", j)
		}
		time.Sleep(10 * time.Millisecond)
	}
	start := time.Now()
	if code, raw := ts.call(t, "DELETE", "/api/v1/jobs/"+sub.ID, nil, nil); code != 202 {
		t.Fatalf("DELETE running: %d %s", code, raw)
	}
	j := ts.waitJob(t, sub.ID, 5*time.Second)
	if took := time.Since(start); j.Status != "canceled" || j.Error.Kind != "canceled" || took > 1500*time.Millisecond {
		t.Errorf("after DELETE: %s in %v", j.Status, took)
	}
	if code, _ := ts.call(t, "DELETE", "/api/v1/jobs/"+sub.ID, nil, nil); code != 200 {
		t.Errorf("DELETE of a canceled job: %d, want 200", code)
	}
	// The gauge is refreshed every 2 s: under load the last refresh may
	// have seen the job still queued, so wait for the next ones.
	for wait := time.Now().Add(6 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		code, raw := ts.call(t, "GET", "/metrics", nil, nil)
		if code == 200 && strings.Contains(string(raw), "genlens_job_queue_depth 0") {
			break
		}
		if time.Now().After(wait) {
			t.Errorf("metrics: %d, queue depth 0 missing", code)
			break
		}
	}
}

func TestSelectionsAPI(t *testing.T) {
	ts := newJobServer(t, server.JobOptions{})
	r := rand.New(rand.NewPCG(3, 4))
	ref := make([]float64, 300*3)
	for i := range ref {
		ref[i] = r.NormFloat64()
	}
	_, up := ts.uploadFile(t, "ref.npy", npyFile(t, []int{300, 3}, ref))
	var created struct {
		ID         string
		Next       string
		Generators []struct{ Name string }
	}
	body := fmt.Sprintf(`{"name":"demo","generators":["far","near"],"ref":%q,"bonus_scale":0.05}`, up["id"])
	if code, raw := ts.call(t, "POST", "/api/v1/selections", body, &created); code != 201 || created.ID == "" || created.Next != "far" || len(created.Generators) != 2 {
		t.Fatalf("create: %d %s", code, raw)
	}
	shift := map[string]float64{"far": 3, "near": 0}
	for range 40 {
		var next struct {
			Generator string
			Step      int
		}
		if code, raw := ts.call(t, "GET", "/api/v1/selections/"+created.ID+"/next", nil, &next); code != 200 {
			t.Fatalf("next: %d %s", code, raw)
		}
		batch := make([][]float64, 8)
		for i := range batch {
			batch[i] = []float64{shift[next.Generator] + r.NormFloat64(), r.NormFloat64(), r.NormFloat64()}
		}
		var res struct {
			Step    int
			Samples int
		}
		if code, raw := ts.call(t, "POST", "/api/v1/selections/"+created.ID+"/samples", map[string]any{"generator": next.Generator, "features": batch}, &res); code != 200 || res.Step != next.Step {
			t.Fatalf("samples: %d %s", code, raw)
		}
	}
	var st struct {
		Next       string
		Steps      int
		Generators []struct {
			Name            string
			Batches         int
			Estimate, Index *float64
		}
	}
	ts.call(t, "GET", "/api/v1/selections/"+created.ID, nil, &st)
	if st.Next != "near" || st.Steps != 40 || st.Generators[1].Batches < 30 || *st.Generators[0].Estimate < 5 {
		t.Errorf("status %+v", st)
	}
	var e struct{ Field string }
	if code, _ := ts.call(t, "POST", "/api/v1/selections/"+created.ID+"/samples", `{"generator":"other","features":[[1,2,3]]}`, &e); code != 400 || e.Field != "generator" {
		t.Errorf("unknown generator: %d %+v", code, e)
	}
	if code, _ := ts.call(t, "POST", "/api/v1/selections/"+created.ID+"/samples", `{"generator":"near","features":[[1,2]]}`, &e); code != 400 || e.Field != "features" {
		t.Errorf("short row: %d %+v", code, e)
	}
	if code, _ := ts.call(t, "GET", "/api/v1/selections/nope/next", nil, nil); code != 404 {
		t.Errorf("missing selection: %d", code)
	}
	_, raw := ts.call(t, "GET", "/metrics", nil, nil)
	want := fmt.Sprintf(`genlens_selection_picks{generator="near",selection=%q}`, created.ID)
	if !strings.Contains(string(raw), want) {
		t.Errorf("metrics lack %s", want)
	}
	_, raw = ts.call(t, "GET", "/", nil, nil)
	if !strings.Contains(string(raw), "demo") {
		t.Errorf("dashboard does not list the selection")
	}
}

func TestJobsNeedTheToken(t *testing.T) {
	ts := newTestServer(t, dbtest.SQLite(t), server.Options{Token: "s3cret-s3cret-s3cret", Jobs: server.JobOptions{DataDir: t.TempDir()}})
	for _, p := range []string{"/api/v1/jobs", "/api/v1/selections", "/api/v1/files/x"} {
		resp, err := ts.Client().Get(ts.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 401 {
			t.Errorf("GET %s without the token: %d", p, resp.StatusCode)
		}
	}
	if code, _ := ts.call(t, "GET", "/api/v1/jobs", nil, nil); code != 200 {
		t.Errorf("with the token: %d", code)
	}
}

// Two replicas on one database (and one data directory) serve one
// selection: batches posted alternately to each give both the same
// state, the one a single replica reaches with the same batches.
func TestSelectionTwoReplicas(t *testing.T) {
	for _, be := range dbtest.Backends(t) {
		t.Run(be.Name, func(t *testing.T) {
			dsn, dir := be.DSN(t), t.TempDir()
			jo := server.JobOptions{DataDir: dir, Heartbeat: 50 * time.Millisecond, Poll: 50 * time.Millisecond}
			a := newTestServer(t, dsn, server.Options{Jobs: jo})
			b := newTestServer(t, dsn, server.Options{Jobs: jo})
			single := newJobServer(t, server.JobOptions{})
			r := rand.New(rand.NewPCG(5, 6))
			ref := make([]float64, 200*3)
			for i := range ref {
				ref[i] = r.NormFloat64()
			}
			refNPY := npyFile(t, []int{200, 3}, ref)
			_, up := a.uploadFile(t, "ref.npy", refNPY)
			single.uploadFile(t, "ref.npy", refNPY)
			body := fmt.Sprintf(`{"generators":["g0","g1","g2"],"ref":%q}`, up["id"])
			var sa, ss struct{ ID string }
			a.call(t, "POST", "/api/v1/selections", body, &sa)
			single.call(t, "POST", "/api/v1/selections", body, &ss)
			for step := range 24 {
				via := []*testServer{a, b}[step%2]
				var next, want struct{ Generator string }
				via.call(t, "GET", "/api/v1/selections/"+sa.ID+"/next", nil, &next)
				single.call(t, "GET", "/api/v1/selections/"+ss.ID+"/next", nil, &want)
				if next != want {
					t.Fatalf("step %d: replicas pick %s, one server %s", step, next.Generator, want.Generator)
				}
				batch := make([][]float64, 5)
				for i := range batch {
					batch[i] = []float64{float64(step%3) + r.NormFloat64(), r.NormFloat64(), r.NormFloat64()}
				}
				samples := map[string]any{"generator": next.Generator, "features": batch}
				if code, raw := via.call(t, "POST", "/api/v1/selections/"+sa.ID+"/samples", samples, nil); code != 200 {
					t.Fatalf("post via replica %d: %d %s", step%2, code, raw)
				}
				single.call(t, "POST", "/api/v1/selections/"+ss.ID+"/samples", samples, nil)
			}
			type gen struct {
				Name                   string
				Batches, Samples       int
				Index, Estimate, Bonus *float64
			}
			var ga, gb, gs struct{ Generators []gen }
			a.call(t, "GET", "/api/v1/selections/"+sa.ID, nil, &ga)
			b.call(t, "GET", "/api/v1/selections/"+sa.ID, nil, &gb)
			single.call(t, "GET", "/api/v1/selections/"+ss.ID, nil, &gs)
			ja, _ := json.Marshal(ga)
			jb, _ := json.Marshal(gb)
			js, _ := json.Marshal(gs)
			if string(ja) != string(js) || string(jb) != string(js) {
				t.Errorf("states differ:\nA      %s\nB      %s\nsingle %s", ja, jb, js)
			}
		})
	}
}
