//go:build !openblas

package linalg

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/genlens/genlens/internal/tensor/simdblas"
)

// TestSIMDBackendChosen: the default build names internal/simdblas where
// the CPU runs it, and GENLENS_SIMD=off (read at start-up, so checked in
// a child process) keeps gonum's own BLAS.
func TestSIMDBackendChosen(t *testing.T) {
	if os.Getenv("GENLENS_TEST_PRINT_BACKEND") == "1" {
		os.Stdout.WriteString("backend=" + Backend() + "\n")
		return
	}
	want := "gonum"
	if simdblas.Available && os.Getenv(SIMDEnv) != "off" {
		want = "simdblas"
	}
	if !strings.HasPrefix(Backend(), want) {
		t.Errorf("Backend() = %q, want %s...", Backend(), want)
	}
	if Tuned() != (want == "simdblas") {
		t.Errorf("Tuned() = %v with backend %q", Tuned(), Backend())
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestSIMDBackendChosen$")
	cmd.Env = append(os.Environ(), SIMDEnv+"=off", "GENLENS_TEST_PRINT_BACKEND=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "backend=gonum") {
		t.Errorf("with %s=off the backend is not gonum's:\n%s", SIMDEnv, out)
	}
}
