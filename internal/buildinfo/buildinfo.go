package buildinfo

import (
	"fmt"
	"os"
	"runtime/debug"
	"strings"
	"time"
)

// Version is the module version the running binary was built from: the
// tag for `go install genlens/cmd/genlens@vX`, the pseudo-version Go
// stamps from the checkout's commit, else the VCS revision and date.
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	return Of(bi).Short()
}

// Text is Long for the running binary, with the modification time of its
// executable as the build time.
func Text() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "genlens version devel\n"
	}
	var built time.Time
	if exe, err := os.Executable(); err == nil {
		if st, err := os.Stat(exe); err == nil {
			built = st.ModTime()
		}
	}
	return Of(bi).Long(built)
}

// Info is what a binary knows of its own build (debug.ReadBuildInfo):
// the module version, the VCS revision with its commit time and whether
// the tree had uncommitted changes, and the Go toolchain.
type Info struct {
	module   string // bi.Main.Version: "v1.2.0", "v0.0.0-2026...-abcdef+dirty" or "(devel)"
	revision string // full commit hash; "" when built without VCS information
	time     string // commit time of the revision (RFC 3339)
	dirty    bool   // built from a tree with uncommitted changes
	goVer    string
	platform string
}

func Of(bi *debug.BuildInfo) Info {
	b := Info{module: bi.Main.Version, goVer: bi.GoVersion}
	var goos, goarch string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.revision = s.Value
		case "vcs.time":
			b.time = s.Value
		case "vcs.modified":
			b.dirty = s.Value == "true"
		case "GOOS":
			goos = s.Value
		case "GOARCH":
			goarch = s.Value
		}
	}
	if goos != "" {
		b.platform = goos + "/" + goarch
	}
	return b
}

// Short is the one-word version of the first line of --version.
func (b Info) Short() string {
	if b.module != "" && b.module != "(devel)" {
		return b.module
	}
	if b.revision == "" {
		return "devel"
	}
	rev := b.revision
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if b.dirty {
		rev += "+dirty"
	}
	return "devel " + rev + " " + b.time
}

// Long is the text of `genlens version` and `genlens --version`: the
// version, the revision (with its commit time and the dirty flag), when
// the binary was built (the modification time of the executable, built,
// when known: Go records no build time) and the toolchain.
func (b Info) Long(built time.Time) string {
	var s strings.Builder
	fmt.Fprintf(&s, "genlens version %s\n", b.Short())
	mod := b.module
	if mod == "" {
		mod = "(devel)"
	}
	fmt.Fprintf(&s, "module    genlens %s\n", mod)
	if b.revision == "" {
		s.WriteString("revision  unknown (built without VCS information: -buildvcs=false, or outside a git checkout's own directory)\n")
	} else {
		state := "clean"
		if b.dirty {
			state = "dirty: uncommitted changes"
		}
		fmt.Fprintf(&s, "revision  %s (%s)\n", b.revision, state)
		if b.time != "" {
			fmt.Fprintf(&s, "committed %s\n", b.time)
		}
	}
	if !built.IsZero() {
		fmt.Fprintf(&s, "built     %s\n", built.UTC().Format(time.RFC3339))
	}
	fmt.Fprintf(&s, "go        %s %s\n", b.goVer, b.platform)
	return s.String()
}
