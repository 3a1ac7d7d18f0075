package main

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/genlens/genlens/internal/testkit/shareddata"
)

// runnableMarker precedes a shell block of the README or of docs/ that
// runs as pasted, quickly, on the test data; docsTestBlocks finds them.
const runnableMarker = "<!-- runnable -->"

type docBlock struct {
	file string
	line int
	src  string
}

// docsTestBlocks returns the runnable blocks of README.md and docs/*.md.
// A marker not followed by a sh block is an error: it would silently
// leave an example untested.
func docsTestBlocks(t *testing.T, root string) []docBlock {
	t.Helper()
	files := []string{filepath.Join(root, "README.md")}
	more, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, more...)
	block := regexp.MustCompile("^" + regexp.QuoteMeta(runnableMarker) + "\n```(?:sh|bash)\n((?s:.*?))```")
	var blocks []docBlock
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		for off := 0; ; {
			i := strings.Index(s[off:], runnableMarker)
			if i < 0 {
				break
			}
			at := off + i
			if at > 0 && s[at-1] != '\n' {
				off = at + len(runnableMarker) // named in prose, not a marker
				continue
			}
			line := strings.Count(s[:at], "\n") + 1
			m := block.FindStringSubmatch(s[at:])
			rel, _ := filepath.Rel(root, f)
			if m == nil {
				t.Errorf("%s:%d: %s is not followed on the next line by a ```sh block", rel, line, runnableMarker)
				off = at + len(runnableMarker)
				continue
			}
			blocks = append(blocks, docBlock{file: rel, line: line + 2, src: m[1]})
			off = at + len(m[0])
		}
	}
	return blocks
}

// Every shell block of the README and docs/ marked runnable runs as
// pasted: with the built genlens on PATH, in an empty folder, against
// the test data (GENLENS_SHARED_DATA). Each block is bounded, so only
// quick ones are to be marked.
func TestDocsRunnableBlocks(t *testing.T) {
	root := filepath.Join("..", "..")
	blocks := docsTestBlocks(t, root)
	if len(blocks) < 2 {
		t.Fatalf("%d runnable blocks in README.md and docs/; the README's examples 1 and 5 at least are marked %s", len(blocks), runnableMarker)
	}
	data := shareddata.Dir()
	if data == "" {
		t.Skipf("shared data not found (set GENLENS_SHARED_DATA or place it at ../shared/data): skipping the %d runnable blocks of the docs", len(blocks))
	}
	data, err := filepath.Abs(data)
	if err != nil {
		t.Fatal(err)
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash on PATH to run the docs' shell blocks")
	}
	bin := serveBinary(t)
	cache := t.TempDir() // shared: a later block reuses an earlier one's features, as a user's would
	for _, b := range blocks {
		t.Run(strings.ReplaceAll(b.file, "/", "_")+":"+strconv.Itoa(b.line), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, bash, "-e", "-o", "pipefail", "-c", freePorts(t, b.src))
			cmd.Dir = t.TempDir()
			cmd.Env = append(os.Environ(),
				"PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"),
				"GENLENS_SHARED_DATA="+data,
				"GENLENS_CACHE="+cache)
			cmd.WaitDelay = 5 * time.Second
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%s:%d: %v\n%s\n--- block:\n%s", b.file, b.line, err, out, b.src)
			}
		})
	}
}

// loopbackPort matches an address a block serves or calls on.
var loopbackPort = regexp.MustCompile(`(127\.0\.0\.1|localhost):(\d{4,5})\b`)

// freePorts gives each loopback port a block names a port that is free
// now, the same one wherever the block names it (as 127.0.0.1 or as
// localhost): a user pastes the block with its fixed port, but a test
// that holds a fixed port fails whenever anything else on the machine (a
// benchmark script, another test binary) holds it.
func freePorts(t *testing.T, src string) string {
	t.Helper()
	free := map[string]string{}
	return loopbackPort.ReplaceAllStringFunc(src, func(addr string) string {
		m := loopbackPort.FindStringSubmatch(addr)
		host, port := m[1], m[2]
		if _, ok := free[port]; !ok {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			_, p, _ := net.SplitHostPort(l.Addr().String())
			l.Close()
			free[port] = p
		}
		return host + ":" + free[port]
	})
}

func TestFreePorts(t *testing.T) {
	src := "serve --addr 127.0.0.1:18441 &\ncurl http://localhost:18441/v1 http://127.0.0.1:18442/x"
	got := freePorts(t, src)
	m := loopbackPort.FindAllStringSubmatch(got, -1)
	if len(m) != 3 || m[0][1] != "127.0.0.1" || m[1][1] != "localhost" || m[0][2] != m[1][2] || m[0][2] == m[2][2] ||
		m[0][2] == "18441" || m[2][2] == "18442" {
		t.Fatalf("freePorts(%q) = %q: want the hosts kept, the first two ports equal, the third different, none of the originals", src, got)
	}
}
