package server_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/genlens/genlens/internal/service/server"
	"github.com/genlens/genlens/internal/testkit/dbtest"
)

// Streams whose small bodies came without a length hold no more of the
// bodies in flight than they cost once read: while two stay open, a JSON
// POST elsewhere is served, not refused with 503.
func TestLLMStreamReleasesBodyBudget(t *testing.T) {
	const maxBody = 1 << 20
	ts, up, _ := newProxyOn(t, dbtest.SQLite(t), server.Options{MaxBody: maxBody, MaxBodiesInFlight: 2 * maxBody, BodyWait: 500 * time.Millisecond})
	hold := make(chan struct{})
	defer close(hold)
	up.set(func(w http.ResponseWriter, r *http.Request, _ []byte) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-hold:
		case <-r.Context().Done():
		}
	})
	body := strings.Replace(chatBody, `"temperature": 0`, `"temperature": 0, "stream": true`, 1)
	for i := range 2 {
		// No length: the reader is not one http.NewRequest measures.
		req, _ := http.NewRequest("POST", ts.URL+"/v1/chat/completions", io.MultiReader(strings.NewReader(body)))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if line, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil || resp.StatusCode != 200 {
			t.Fatalf("stream %d: %d %q %v", i, resp.StatusCode, line, err)
		}
	}
	code, raw := ts.call(t, "POST", "/api/v1/monitors", map[string]any{"name": "m"}, nil)
	if code == http.StatusServiceUnavailable {
		t.Fatalf("a JSON POST beside two open streams: %d %s", code, raw)
	}
}

// A caller that never reads its stream does not hold the handler: a
// write that does not reach it within the proxy's timeout ends the
// exchange, which is then stored with what happened.
func TestLLMStreamCallerNeverReads(t *testing.T) {
	ts, up, _ := newProxyTimeout(t, dbtest.SQLite(t), server.Options{}, time.Second)
	chunk := "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" + strings.Repeat("x", 32<<10) + "\"}}]}\n\n"
	up.set(func(w http.ResponseWriter, r *http.Request, _ []byte) {
		w.Header().Set("Content-Type", "text/event-stream")
		for range 100_000 { // ~3 GB: far beyond what sockets buffer
			if _, err := io.WriteString(w, chunk); err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
	})
	conn, err := net.Dial("tcp", strings.TrimPrefix(ts.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := strings.Replace(chatBody, `"temperature": 0`, `"temperature": 0, "stream": true`, 1)
	fmt.Fprintf(conn, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	// The connection is never read.
	list := ts.waitRequests(t, "", 1)
	if g := list.Requests[0]; !strings.Contains(g.Error, "writing to the caller") {
		t.Errorf("stored %+v", g)
	}
}

// A token given with a trailing newline, as a Kubernetes secret often
// holds it, is the token without it.
func TestTokenTrimmed(t *testing.T) {
	const tok = "0123456789abcdef0123456789abcdef"
	ts := newTestServer(t, dbtest.SQLite(t), server.Options{Token: tok + "\n"})
	req, _ := http.NewRequest("GET", ts.URL+"/api/v1/monitors", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("the token without its newline: %d", resp.StatusCode)
	}
}
