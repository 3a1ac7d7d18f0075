package buildinfo

import (
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

// The version text holds the module version, the VCS
// revision with its commit time and dirty flag, when the binary was built
// and the toolchain, as debug.ReadBuildInfo records them.
func TestVersionText(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "genlens", Version: "v0.0.0-20261126124536-39a2a6949c9f+dirty"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "39a2a6949c9f29bfc198991e725a482468bc7408"},
			{Key: "vcs.time", Value: "2026-11-26T12:45:36Z"}, {Key: "vcs.modified", Value: "true"},
			{Key: "GOOS", Value: "linux"}, {Key: "GOARCH", Value: "amd64"}}}
	got := Of(bi).Long(time.Date(2026, 11, 26, 13, 0, 0, 0, time.UTC))
	for _, w := range []string{"genlens version v0.0.0-20261126124536-39a2a6949c9f+dirty\n",
		"revision  39a2a6949c9f29bfc198991e725a482468bc7408 (dirty: uncommitted changes)",
		"committed 2026-11-26T12:45:36Z", "built     2026-11-26T13:00:00Z", "go1.26.8 linux/amd64"} {
		if !strings.Contains(got, w) {
			t.Errorf("version text lacks %q:\n%s", w, got)
		}
	}
	// Without a module version (go build of a checkout before Go 1.24):
	// the short revision.
	bi.Main.Version = "(devel)"
	if s := Of(bi).Short(); s != "devel 39a2a6949c9f+dirty 2026-11-26T12:45:36Z" {
		t.Errorf("short %q", s)
	}
	bi.Settings = nil
	if got := Of(bi).Long(time.Time{}); !strings.Contains(got, "revision  unknown (built without VCS information") {
		t.Errorf("no VCS: %s", got)
	}
}
