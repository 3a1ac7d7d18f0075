package server

import (
	"reflect"
	"testing"
)

// A job reads only the environment variables the server lists.
func TestEnvSecrets(t *testing.T) {
	t.Setenv("GENLENS_TEST_LISTED", "k1")
	t.Setenv("GENLENS_TEST_UNLISTED", "k2")
	if EnvSecrets(nil) != nil {
		t.Error("no names: want no lookup")
	}
	look := EnvSecrets([]string{"GENLENS_TEST_LISTED", "GENLENS_TEST_UNSET"})
	for _, c := range []struct {
		name, want string
		ok         bool
	}{{"GENLENS_TEST_LISTED", "k1", true}, {"GENLENS_TEST_UNLISTED", "", false}, {"GENLENS_TEST_UNSET", "", false}, {"PATH", "", false}} {
		if v, ok := look(c.name); v != c.want || ok != c.ok {
			t.Errorf("%s: %q, %v; want %q, %v", c.name, v, ok, c.want, c.ok)
		}
	}
}

// --secret-env NAME=URL binds the variable NAME to URL: it is read by its
// name, its value redacted, and its base URLs returned for the jobs.
func TestSecretSpecs(t *testing.T) {
	t.Setenv("GENLENS_TEST_BOUND", "b1")
	t.Setenv("GENLENS_TEST_FREE", "f1")
	specs := []string{"GENLENS_TEST_BOUND=https://api.example.com/v1", "GENLENS_TEST_FREE", "GENLENS_TEST_BOUND=http://127.0.0.1:8000"}
	if v, ok := EnvSecrets(specs)("GENLENS_TEST_BOUND"); !ok || v != "b1" {
		t.Errorf("bound secret read as %q, %v", v, ok)
	}
	if got := SecretValues(specs); !reflect.DeepEqual(got, []string{"b1", "f1", "b1"}) {
		t.Errorf("values %q", got)
	}
	want := map[string][]string{"GENLENS_TEST_BOUND": {"https://api.example.com/v1", "http://127.0.0.1:8000"}}
	if got := SecretBaseURLs(specs); !reflect.DeepEqual(got, want) {
		t.Errorf("bindings %v, want %v", got, want)
	}
	if SecretBaseURLs([]string{"GENLENS_TEST_FREE"}) != nil {
		t.Error("no binding: want nil")
	}
}
