package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/metric/frechet"
)

// TestServeAdversarial replays cheap reproductions of the attacks on the
// service against the real binary under a 6 GB address-space cap
// (prlimit --as), as an attacker ran them: after each, the service is
// alive, answers /livez within a second, and the attack got its
// documented status. Sizes are scaled so that the whole takes seconds.
func TestServeAdversarial(t *testing.T) {
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		t.Skip("prlimit (util-linux) not installed: the adversarial suite needs it to cap serve's address space")
	}
	bin := serveBinary(t)
	dir := t.TempDir()
	wrapper := filepath.Join(dir, "genlens-capped")
	script := fmt.Sprintf("#!/bin/sh\nexec %s --as=%d -- %s \"$@\"\n", prlimit, int64(6)<<30, bin)
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GENLENS_TEST_SECRET", "sk-bound-0123456789")
	p, err := launchServe(t, wrapper, "--db", filepath.Join(dir, "genlens.db"), "--max-body-mb", "4",
		"--llm-upstream", "http://127.0.0.1:9/v1", "--allow-base-url", "http://127.0.0.1:9/v1", "--allow-base-url", "http://127.0.0.1:10/v1",
		"--secret-env", "GENLENS_TEST_SECRET=http://127.0.0.1:9/v1")
	if err != nil {
		t.Fatal(err)
	}
	const token = "tok-tok-tok-tok-tok"
	do := func(method, path, ctype string, body []byte) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, p.url+path, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", method, path, err, p.log())
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return resp.StatusCode, string(raw)
	}
	multipartOf := func(name string, data []byte) (string, []byte) {
		var b bytes.Buffer
		mw := multipart.NewWriter(&b)
		fw, _ := mw.CreateFormFile("file", name)
		fw.Write(data)
		mw.Close()
		return mw.FormDataContentType(), b.Bytes()
	}
	alive := func(after string) {
		t.Helper()
		start := time.Now()
		resp, err := (&http.Client{Timeout: 5 * time.Second}).Get(p.url + "/livez")
		if err != nil {
			t.Fatalf("after %s: the service is down: %v\n%s", after, err, p.log())
		}
		resp.Body.Close()
		if resp.StatusCode != 200 || time.Since(start) > time.Second {
			t.Errorf("after %s: /livez %d in %v", after, resp.StatusCode, time.Since(start))
		}
	}
	expect := func(name string, code int, body string, want int, contains string) {
		t.Helper()
		if code != want || !strings.Contains(body, contains) {
			t.Errorf("%s: %d %.300s; want %d with %q", name, code, body, want, contains)
		}
		alive(name)
	}

	// A part declaring a billion shards: refused before it is stored
	// (it allocated a billion ints, and again at every restart).
	part := &frechet.Part{N: 5, Mean: []float64{0, 0}, Scatter: mat.NewSymDense(2, nil), Shard: 0, Shards: 1_000_000_000,
		Listing: frechet.Listing{Kind: "features", Count: 5, Cols: 2, SHA256: strings.Repeat("ab", 32)}}
	var pb bytes.Buffer
	if err := frechet.EncodePart(&pb, part); err != nil {
		t.Fatal(err)
	}
	ct, body := multipartOf("part-0.npz", pb.Bytes())
	code, out := do("POST", "/api/v1/stats/poison/parts", ct, body)
	expect("a part of 1e9 shards", code, out, 422, "shards")
	code, out = do("GET", "/api/v1/stats/poison", "", nil)
	expect("the poisoned name read back", code, out, 404, "")

	// A .npy whose header declares a 200,000 × 200,000 matrix over a few
	// bytes: priced from its shape before anything is decoded.
	var npy bytes.Buffer
	hdr := "{'descr': '<f8', 'fortran_order': False, 'shape': (200000, 200000), }"
	hdr += strings.Repeat(" ", 63-(10+len(hdr))%64) + "\n"
	npy.WriteString("\x93NUMPY\x01\x00")
	binary.Write(&npy, binary.LittleEndian, uint16(len(hdr)))
	npy.WriteString(hdr)
	npy.Write(make([]byte, 64))
	ct, body = multipartOf("huge.npy", npy.Bytes())
	code, out = do("POST", "/api/v1/files", ct, body)
	if code != 201 && code != 200 {
		t.Fatalf("upload: %d %s", code, out)
	}
	var up struct{ ID string }
	json.Unmarshal([]byte(out), &up)
	code, out = do("POST", "/api/v1/jobs/stats", "application/json", []byte(`{"in":"`+up.ID+`"}`))
	if code != 202 && code != 201 {
		t.Fatalf("stats job: %d %s", code, out)
	}
	var sub struct{ ID string }
	json.Unmarshal([]byte(out), &sub)
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, out = do("GET", "/api/v1/jobs/"+sub.ID, "", nil)
		if strings.Contains(out, `"failed"`) || strings.Contains(out, `"succeeded"`) || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	expect("a stats job on a 200,000² header", code, out, 200, `"status":"failed"`)
	if !strings.Contains(out, `"kind":"input"`) || !strings.Contains(out, "GiB") {
		t.Errorf("the job failed otherwise: %s", out)
	}

	// A model name of 1 MB: refused before it is stored or logged.
	big := strings.Repeat("m", 1<<20)
	code, out = do("POST", "/v1/chat/completions", "application/json", []byte(`{"model":"`+big+`","messages":[{"role":"user","content":"hi"}]}`))
	expect("a 1 MB model name", code, out, 400, "model")
	if strings.Contains(p.log(), big[:1000]) {
		t.Error("the model name reached the log")
	}

	// A body over --max-body-mb.
	code, out = do("POST", "/api/v1/monitors", "application/json", bytes.Repeat([]byte(" "), 5<<20))
	expect("a 5 MB body over 4 MB", code, out, 413, "")

	// A monitor's chunks: paged by limit, a page past the bound refused.
	monBody, _ := json.Marshal(map[string]any{"name": "m", "model": serveModel(t), "chunk_size": 1})
	code, out = do("POST", "/api/v1/monitors", "application/json", monBody)
	if code != 201 {
		t.Fatalf("monitor: %d %s", code, out)
	}
	var mon struct{ ID int64 }
	json.Unmarshal([]byte(out), &mon)
	r := rand.New(rand.NewPCG(5, 6))
	for i := range 5 {
		rows, _ := json.Marshal(batch(fmt.Sprint("b", i), 1000, r))
		if code, out := do("POST", fmt.Sprintf("/api/v1/monitors/%d/rows", mon.ID), "application/json", rows); code != 200 {
			t.Fatalf("rows: %d %s", code, out)
		}
	}
	start := time.Now()
	code, out = do("GET", fmt.Sprintf("/api/v1/monitors/%d/chunks?limit=100", mon.ID), "", nil)
	expect("a page of 100 of 5000 chunks", code, out, 200, `"total_chunks":5000`)
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("a page of 100 chunks took %v", d)
	}
	code, out = do("GET", fmt.Sprintf("/api/v1/monitors/%d/chunks?limit=10001", mon.ID), "", nil)
	expect("limit over its bound", code, out, 400, "limit")

	// A secret bound to one base URL, named with another: refused at
	// submission; the secret's value appears nowhere.
	ct, body = multipartOf("prompts.jsonl", []byte(`{"id":"a","prompt":"hi"}`+"\n"))
	if code, out = do("POST", "/api/v1/files", ct, body); code != 201 && code != 200 {
		t.Fatalf("upload: %d %s", code, out)
	}
	json.Unmarshal([]byte(out), &up)
	code, out = do("POST", "/api/v1/jobs/sample", "application/json",
		[]byte(`{"prompts":"`+up.ID+`","base_url":"http://127.0.0.1:10/v1","model":"m","api_key_env":"GENLENS_TEST_SECRET"}`))
	expect("a bound secret sent elsewhere", code, out, 400, `"field":"base_url"`)

	// Sign-in guesses from one address: 429 after ten, the service up.
	last := 0
	for range 15 {
		resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).
			PostForm(p.url+"/login", url.Values{"token": {"guess"}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		last = resp.StatusCode
	}
	expect("15 sign-in guesses", last, "", 429, "")

	if strings.Contains(p.log(), "sk-bound-0123456789") {
		t.Error("a secret's value reached the log")
	}
}
