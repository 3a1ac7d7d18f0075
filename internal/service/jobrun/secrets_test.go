package jobrun

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/store/records"
)

// A secret bound to base URLs is refused, at submission, for a job that
// would send it elsewhere: a field error on base_url naming the bound.
func TestSecretBoundToBaseURLs(t *testing.T) {
	allowed := []string{"http://127.0.0.1:9/v1", "http://127.0.0.1:10/v1"}
	secret := func(name string) (string, bool) { return "k-123", name == "LLM_KEY" || name == "FREE_KEY" }
	s := newTestService(t, nil, Config{AllowedBaseURLs: allowed, Secret: secret,
		SecretBaseURLs: map[string][]string{"LLM_KEY": {"http://127.0.0.1:9/v1"}}})
	ctx := context.Background()
	pid := upload(t, s, "prompts.jsonl", []byte(`{"id":"a","prompt":"hi"}`+"\n"))
	body := func(base, env string) []byte {
		return []byte(`{"prompts":"` + pid + `","base_url":"` + base + `","model":"m","api_key_env":"` + env + `"}`)
	}
	_, err := s.Submit(ctx, "sample", body("http://127.0.0.1:10/v1", "LLM_KEY"))
	var fe *fault.FieldError
	if !errors.As(err, &fe) || fe.Field != "base_url" || !strings.Contains(err.Error(), "may be sent only to http://127.0.0.1:9/v1") {
		t.Errorf("a bound secret to another allowed base URL: %v", err)
	}
	for _, c := range []struct{ base, env string }{{"http://127.0.0.1:9/v1", "LLM_KEY"}, {"http://127.0.0.1:9/v1/", "LLM_KEY"}, {"http://127.0.0.1:10/v1", "FREE_KEY"}} {
		j, err := s.Submit(ctx, "sample", body(c.base, c.env))
		if err != nil {
			t.Errorf("%s to %s: %v", c.env, c.base, err)
			continue
		}
		if _, err := s.Cancel(ctx, j.ID); err != nil {
			t.Fatal(err)
		}
	}
}

// No job's error carries a secret's value, wherever the text came from.
func TestJobErrorRedactsSecrets(t *testing.T) {
	const value = "sk-live-0123456789"
	s := newTestService(t, nil, Config{Redact: []string{"", value}})
	in := upload(t, s, "x.csv", []byte("a,b\n1,"+value+"\n"))
	j, err := s.Submit(context.Background(), "stats", []byte(`{"in":"`+in+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	j = waitJob(t, s, j.ID, 30*time.Second)
	if j.Status != records.StatusFailed || strings.Contains(j.Error, value) || !strings.Contains(j.Error, "[redacted]") {
		t.Errorf("%s: %q", j.Status, j.Error)
	}
}
