package llm

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A named client's errors carry its name, never the address it called:
// a refused connection and an error status alike.
func TestNamedClientHidesAddress(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + ln.Addr().String()
	ln.Close() // nothing listens there now
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusBadRequest) }))
	defer failing.Close()
	for _, base := range []string{refused, failing.URL} {
		for _, name := range []string{"", "upstream"} {
			c, err := New(Config{BaseURL: base + "/v1", Name: name})
			if err != nil {
				t.Fatal(err)
			}
			err = c.Post(context.Background(), "/chat/completions", map[string]string{}, nil)
			if err == nil {
				t.Fatalf("%s: no error", base)
			}
			host := strings.TrimPrefix(base, "http://")
			if shown := strings.Contains(err.Error(), host); shown != (name == "") {
				t.Errorf("name %q: address shown %v: %v", name, shown, err)
			}
			if name != "" && !strings.Contains(err.Error(), "POST upstream/chat/completions") {
				t.Errorf("name %q: %v", name, err)
			}
		}
	}
}
