package features

import (
	"os/exec"
	"strings"
	"testing"
)

// The networks implement ImageEmbedder; the pipeline knows none of them,
// and neither network knows the other (their shared image helpers are
// here and in resample).
func TestLayers(t *testing.T) {
	for _, tc := range []struct{ pkg, never string }{
		{"genlens/features", "genlens/inception"},
		{"genlens/features", "genlens/vit"},
		{"genlens/vit", "genlens/inception"},
		{"genlens/inception", "genlens/vit"},
	} {
		out, err := exec.Command("go", "list", "-deps", tc.pkg).Output()
		if err != nil {
			t.Skipf("go list: %v", err)
		}
		for _, p := range strings.Fields(string(out)) {
			if p == tc.never {
				t.Errorf("package %s depends on %s", tc.pkg, p)
			}
		}
	}
}
