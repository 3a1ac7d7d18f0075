package deploy_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/genlens/genlens/deploy"
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

// The Kubernetes manifests hold what operators rely on: serve with a
// token and Postgres from the secret (whose keys exist), readiness on
// /healthz and liveness on /livez, Prometheus scrape annotations on the
// pods, and a Service on the container's port.
func TestKubernetesManifests(t *testing.T) {
	docs := map[string]map[string]any{}
	for _, name := range []string{"secret.yaml", "deployment.yaml", "service.yaml", "servicemonitor.yaml"} {
		b, err := os.ReadFile(filepath.Join("kubernetes", name))
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(b))
		for {
			var d map[string]any
			if err := dec.Decode(&d); err == io.EOF {
				break
			} else if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			docs[d["kind"].(string)] = d
		}
	}
	get := func(v any, path ...any) any {
		for _, p := range path {
			switch k := p.(type) {
			case string:
				m, _ := v.(map[string]any)
				v = m[k]
			case int:
				s, _ := v.([]any)
				if k >= len(s) {
					return nil
				}
				v = s[k]
			}
		}
		return v
	}
	secretKeys := get(docs["Secret"], "stringData").(map[string]any)
	pod := get(docs["Deployment"], "spec", "template")
	c := get(pod, "spec", "containers", 0)
	args := fmt.Sprint(get(c, "args"))
	for _, want := range []string{"serve", "--token-env=GENLENS_TOKEN", "--db=$(GENLENS_DB)", "--max-queued=", "--max-job-runtime=", "--retain-jobs=", "--retain-uploads="} {
		if !strings.Contains(args, want) {
			t.Errorf("container args %s lack %s", args, want)
		}
	}
	for _, e := range get(c, "env").([]any) {
		key := get(e, "valueFrom", "secretKeyRef", "key")
		if _, ok := secretKeys[fmt.Sprint(key)]; !ok {
			t.Errorf("env %v reads secret key %v, which secret.yaml does not define", get(e, "name"), key)
		}
	}
	// Readiness on /healthz (the database answers, the disk has room);
	// liveness on /livez, which neither can fail: a liveness probe on
	// /healthz would restart the pods in a loop while the disk is full.
	for probe, want := range map[string]string{"readinessProbe": "/healthz", "livenessProbe": "/livez"} {
		if p := get(c, probe, "httpGet", "path"); p != want {
			t.Errorf("%s on %v, want %s", probe, p, want)
		}
	}
	if get(pod, "metadata", "annotations", "prometheus.io/scrape") != "true" || get(pod, "metadata", "annotations", "prometheus.io/path") != "/metrics" {
		t.Errorf("pod annotations %v: want prometheus.io/scrape and path /metrics", get(pod, "metadata", "annotations"))
	}
	if get(docs["Service"], "spec", "ports", 0, "targetPort") != get(c, "ports", 0, "name") {
		t.Errorf("the Service targets %v, the container's port is %v", get(docs["Service"], "spec", "ports", 0, "targetPort"), get(c, "ports", 0, "name"))
	}
	if get(docs["ServiceMonitor"], "spec", "endpoints", 0, "path") != "/metrics" {
		t.Errorf("the ServiceMonitor does not scrape /metrics")
	}
}
