package records

import (
	"os/exec"
	"strings"
	"testing"
)

// The store implements the records without the job runner: package store
// imports records, never jobrun (which imports what runs jobs).
func TestStoreDoesNotImportJobrun(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "genlens/store").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if p == "genlens/jobrun" || strings.HasPrefix(p, "genlens/job/") || p == "genlens/job" {
			t.Errorf("package store depends on %s", p)
		}
	}
}
