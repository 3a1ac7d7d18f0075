package job_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/genlens/genlens/internal/shareddata"
)

// readmeProgram returns the README's library example: the Go block of
// its section on package job that is a whole program.
func readmeProgram(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile("(?s)```go\n(.*?)```").FindAllStringSubmatch(string(b), -1) {
		if strings.Contains(m[1], "package main") && strings.Contains(m[1], "imagejob.Compare(") {
			return m[1]
		}
	}
	t.Fatal("README.md has no Go block that is a whole program calling imagejob.Compare")
	return ""
}

// The README's library example runs as pasted: it builds as a program of
// a module that requires genlens (here a package laid over this module
// with go build -overlay), and, with the shared data's random-weight
// Inception file as its weights, prints a number for FID from two folders
// named with a trailing slash.
func TestREADMELibraryExample(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool on PATH to build the README's example")
	}
	src := readmeProgram(t)
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	main := filepath.Join(tmp, "main.go")
	if err := os.WriteFile(main, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	overlay, _ := json.Marshal(map[string]any{"Replace": map[string]string{
		filepath.Join(root, "internal", "readmeexample", "main.go"): main}})
	ov := filepath.Join(tmp, "overlay.json")
	if err := os.WriteFile(ov, overlay, 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(tmp, "example")
	build := exec.Command(goTool, "build", "-overlay", ov, "-o", bin, "./internal/readmeexample")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("the README's example does not build: %v\n%s\n%s", err, out, src)
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
