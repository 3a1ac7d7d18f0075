package job_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/genlens/genlens/internal/testkit/shareddata"
)

// readmeProgram returns the library example: the Go block of the
// README or of docs/library.md that is a whole program, and the text of
// the file it is in.
func readmeProgram(t *testing.T) (src, doc string) {
	t.Helper()
	for _, name := range []string{"../README.md", "../docs/library.md"} {
		b, err := os.ReadFile(name)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile("(?s)```go\n(.*?)```").FindAllStringSubmatch(string(b), -1) {
			if strings.Contains(m[1], "package main") && strings.Contains(m[1], "imagejob.Compare(") {
				return m[1], string(b)
			}
		}
	}
	t.Fatal("neither README.md nor docs/library.md has a Go block that is a whole program calling imagejob.Compare")
	return "", ""
}

// The library example runs as pasted from a module of its own, the way
// a user builds it: go mod init, a require of github.com/genlens/genlens,
// and (standing in for the network, as the docs tell a user with a local
// clone to do) a replace pointing at this checkout. With the shared
// data's random-weight Inception file as its weights, it prints a number
// for FID from two folders named with a trailing slash.
func TestREADMELibraryExample(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool on PATH to build the README's example")
	}
	src, doc := readmeProgram(t)
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	// The docs give the same steps to a user with a local clone.
	for _, want := range []string{"go mod init", "go mod edit -require github.com/genlens/genlens@v0.0.0 -replace github.com/genlens/genlens=", "go get github.com/genlens/genlens"} {
		if !strings.Contains(doc, want) {
			t.Errorf("the library example's page does not say %q", want)
		}
	}
	mod := t.TempDir()
	if err := os.WriteFile(filepath.Join(mod, "main.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	// The checkout's go.sum holds the sums of genlens's own requirements,
	// which the module cache has: no network is needed.
	sums, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mod, "go.sum"), sums, 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")
	bin := filepath.Join(mod, "example")
	for _, args := range [][]string{
		{"mod", "init", "example"},
		{"mod", "edit", "-require", "github.com/genlens/genlens@v0.0.0", "-replace", "github.com/genlens/genlens=" + root},
		{"build", "-o", bin, "."},
	} {
		c := exec.Command(goTool, args...)
		c.Dir, c.Env = mod, env
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("go %s in a module of its own: %v\n%s\n%s", strings.Join(args, " "), err, out, src)
		}
	}

	fixture := shareddata.Path(t, "fixtures/inception_random")
	run := t.TempDir()
	for side, imgs := range map[string][]string{"real": {"img000.png", "img001.png", "img002.png"}, "samples": {"img003.png", "img004.png", "img005.png"}} {
		if err := os.MkdirAll(filepath.Join(run, "data", side), 0o755); err != nil {
			t.Fatal(err)
		}
		for _, n := range imgs {
			b, err := os.ReadFile(filepath.Join(fixture, "images", n))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(run, "data", side, n), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The weights the example names, in its working directory.
	w := regexp.MustCompile(`req\.Weights = "([^"]+)"`).FindStringSubmatch(src)
	if w == nil {
		t.Fatal("the README's example does not show how to pass the weights (req.Weights = \"...\")")
	}
	if err := os.Symlink(filepath.Join(fixture, "inception_random.pth"), filepath.Join(run, w[1])); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin)
	cmd.Dir = run
	cmd.Env = append(os.Environ(), "GENLENS_CACHE="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the README's example fails: %v\n%s", err, out)
	}
	if !regexp.MustCompile(`(?m)^FID [0-9.e+-]+$`).Match(out) {
		t.Errorf("the README's example printed %q, want FID and a number", out)
	}
}
