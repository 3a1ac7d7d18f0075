package server_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/genlens/genlens/internal/service/server"
	"github.com/genlens/genlens/internal/testkit/dbtest"
)

// The header's links lead to what is there: a server without
// --llm-upstream (and no stored LLM requests) shows no "LLM" link to a
// panel its main page does not have; a proxy's pages link it, and the
// main page has the anchor.
func TestHeaderLLMLink(t *testing.T) {
	for _, tc := range []struct {
		name  string
		proxy bool
	}{{"no upstream", false}, {"proxy", true}} {
		t.Run(tc.name, func(t *testing.T) {
			var ts *testServer
			if tc.proxy {
				ts, _, _ = newProxy(t, server.Options{})
			} else {
				ts = newTestServer(t, dbtest.SQLite(t), server.Options{})
			}
			id := ts.createMonitor(t, "prices", map[string]any{"chunk_size": 100})
			code, index := ts.call(t, "GET", "/", nil, nil)
			if code != 200 {
				t.Fatalf("GET /: %d", code)
			}
			hasAnchor := bytes.Contains(index, []byte(`id="llm"`))
			for _, path := range []string{"/", fmt.Sprintf("/monitors/%d", id)} {
				code, page := ts.call(t, "GET", path, nil, nil)
				if code != 200 {
					t.Fatalf("GET %s: %d", path, code)
				}
				link := bytes.Contains(page, []byte(`href="/#llm"`))
				if link != tc.proxy || link && !hasAnchor {
					t.Errorf("GET %s: LLM link %v, anchor on the main page %v", path, link, hasAnchor)
				}
			}
		})
	}
}
