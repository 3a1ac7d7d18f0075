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

// The services take their stores as interfaces: none imports package
// store (which implements them) or package server (which serves them).
func TestServicesDoNotImportStore(t *testing.T) {
	for _, svc := range []string{"genlens/llmproxy", "genlens/monitorsvc", "genlens/statsvc", "genlens/jobrun"} {
		out, err := exec.Command("go", "list", "-deps", svc).Output()
		if err != nil {
			t.Skipf("go list: %v", err)
		}
		for _, p := range strings.Fields(string(out)) {
			if p == "genlens/store" || p == "genlens/server" {
				t.Errorf("package %s depends on %s", svc, p)
			}
		}
	}
}
