package server_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/genlens/genlens/deploy"
	"github.com/genlens/genlens/internal/service/server"
	"github.com/genlens/genlens/internal/testkit/dbtest"
)

// apiRoute reports whether a route belongs in the API description: the
// /api/ tree, the OpenAI-compatible /v1/ tree, /livez, /healthz and /metrics (the
// dashboard's HTML pages, its stylesheet and /login do not).
func apiRoute(path string) bool {
	return strings.HasPrefix(path, "/api/") || strings.HasPrefix(path, "/v1/") || path == "/livez" || path == "/healthz" || path == "/metrics"
}

// normalizeRoute writes "GET /api/v1/jobs/{id}" as "GET /api/v1/jobs/{}":
// the spec may name a path parameter differently from the mux (one path
// in the spec serves POST .../jobs/{kind} and GET .../jobs/{id}).
var pathParam = regexp.MustCompile(`\{[^}]*\}`)

func normalizeRoute(method, path string) string {
	return strings.ToUpper(method) + " " + pathParam.ReplaceAllString(path, "{}")
}

// serverRoutes finds every route the server registers: the string
// patterns of Handle and HandleFunc calls in the package's non-test
// files, whatever file a route lives in.
func serverRoutes(t *testing.T) map[string]string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	out := map[string]string{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || (sel.Sel.Name != "HandleFunc" && sel.Sel.Name != "Handle") {
				return true
			}
			lit, ok := call.Args[0].(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			pattern, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			method, path, found := strings.Cut(pattern, " ")
			if !found {
				method, path = "ANY", pattern
			}
			if apiRoute(path) {
				out[normalizeRoute(method, path)] = fset.Position(lit.Pos()).String() + ": " + pattern
			}
			return true
		})
	}
	return out
}

// specRoutes returns the operations of deploy/openapi.yaml.
func specRoutes(t *testing.T) map[string]string {
	t.Helper()
	var doc struct {
		OpenAPI string                          `yaml:"openapi"`
		Paths   map[string]map[string]yaml.Node `yaml:"paths"`
	}
	if err := yaml.Unmarshal(deploy.OpenAPI, &doc); err != nil {
		t.Fatalf("deploy/openapi.yaml: %v", err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.1") {
		t.Fatalf("deploy/openapi.yaml: openapi %q, want 3.1.x", doc.OpenAPI)
	}
	out := map[string]string{}
	for path, item := range doc.Paths {
		for method := range item {
			switch method {
			case "get", "put", "post", "delete", "patch", "head", "options":
				out[normalizeRoute(method, path)] = method + " " + path
			}
		}
	}
	return out
}

// Every API route the server registers is described in
// deploy/openapi.yaml, and the spec describes no route the server lacks.
// A route added in any file of the package without its description fails
// here, naming it.
func TestOpenAPICoversRoutes(t *testing.T) {
	routes, spec := serverRoutes(t), specRoutes(t)
	if len(routes) < 20 {
		t.Fatalf("found only %d routes in the server's source: %v", len(routes), slices.Sorted(maps.Keys(routes)))
	}
	var missing, extra []string
	for _, k := range slices.Sorted(maps.Keys(routes)) {
		if _, ok := spec[k]; !ok {
			missing = append(missing, "  "+routes[k])
		}
	}
	for _, k := range slices.Sorted(maps.Keys(spec)) {
		if _, ok := routes[k]; !ok {
			extra = append(extra, "  "+spec[k])
		}
	}
	if len(missing) > 0 {
		t.Errorf("routes missing from deploy/openapi.yaml (add a path item for each):\n%s", strings.Join(missing, "\n"))
	}
	if len(extra) > 0 {
		t.Errorf("deploy/openapi.yaml describes routes the server does not register:\n%s", strings.Join(extra, "\n"))
	}
}

// The server serves the description it embeds.
func TestOpenAPIServed(t *testing.T) {
	ts := newTestServer(t, dbtest.SQLite(t), server.Options{})
	code, body := ts.call(t, "GET", "/api/v1/openapi.yaml", nil, nil)
	file, err := os.ReadFile("../../../deploy/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if code != 200 || string(body) != string(file) {
		t.Fatalf("GET /api/v1/openapi.yaml: %d, %d bytes; want 200 and the %d bytes of deploy/openapi.yaml", code, len(body), len(file))
	}
}
