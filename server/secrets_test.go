package server

import "testing"

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
