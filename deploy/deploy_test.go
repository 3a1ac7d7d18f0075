package deploy_test

import (
	"os/exec"
	"strings"
	"testing"

	"genlens/deploy"
)

// The alerting rules load and pass their unit tests
// (prometheus/rules_test.yml) under promtool, from Debian's prometheus
// package (.ci/run installs it).
func TestPrometheusRules(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("no promtool: the alerting rules' unit tests need it (Debian package prometheus; .ci/run installs it)")
	}
	for _, args := range [][]string{{"check", "rules", "prometheus/rules.yml"}, {"test", "rules", "prometheus/rules_test.yml"}} {
		out, err := exec.Command(promtool, args...).CombinedOutput()
		if err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// The embedded description is the OpenAPI 3.1 file.
func TestOpenAPIEmbedded(t *testing.T) {
	if !strings.HasPrefix(string(deploy.OpenAPI), "openapi: 3.1.") {
		t.Fatalf("deploy.OpenAPI starts %q", string(deploy.OpenAPI[:min(40, len(deploy.OpenAPI))]))
	}
}

// The OpenAPI description passes a maintained linter, Redocly's, when
// it is installed (.ci/run installs it with npm).
func TestOpenAPILint(t *testing.T) {
	redocly, err := exec.LookPath("redocly")
	if err != nil {
		t.Skip("no redocly on PATH: the OpenAPI lint needs it (npm install @redocly/cli; .ci/run runs it)")
	}
	out, err := exec.Command(redocly, "lint", "openapi.yaml").CombinedOutput()
	if err != nil {
		t.Errorf("redocly lint openapi.yaml: %v\n%s", err, out)
	}
}
