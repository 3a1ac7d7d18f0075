package main

import (
	"bytes"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/creack/pty"
)

// screen replays terminal output as a terminal shows it: '\r' returns
// to the start of the line, later characters overwrite earlier ones.
func screen(out string) []string {
	var lines []string
	for _, raw := range strings.Split(out, "\n") {
		var buf []rune
		col := 0
		for _, r := range raw {
			if r == '\r' {
				col = 0
				continue
			}
			if col < len(buf) {
				buf[col] = r
			} else {
				buf = append(buf, r)
			}
			col++
		}
		lines = append(lines, strings.TrimRight(string(buf), " "))
	}
	return lines
}

// underPTY runs fn with a pseudo-terminal as its terminal and returns
// what fn wrote to it; the test skips where no pty can be opened.
func underPTY(t *testing.T, fn func(tty *os.File)) string {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	defer ptmx.Close()
	var got bytes.Buffer
	read := make(chan struct{})
	go func() {
		_, _ = io.Copy(&got, ptmx) // ends with EIO once tty is closed
		close(read)
	}()
	fn(tty)
	tty.Close()
	<-read
	return got.String()
}

var barLine = regexp.MustCompile(`^demo +\d+% \|[█ ]*\| \(\d+/\d+\) \[[^\]]*\]$`)

// The demo in a real terminal (a pty): its progress bar must never share
// a line with the text the sections print.
func TestDemoProgressUnderPTY(t *testing.T) {
	var code int
	got := underPTY(t, func(tty *os.File) { code = run([]string{"demo", "--out", t.TempDir()}, tty, tty) })
	if code != 0 {
		t.Fatalf("demo exit %d:\n%s", code, got)
	}
	lines := screen(got)
	bars, headings := 0, 0
	for _, l := range lines {
		if strings.Contains(l, "█") || strings.HasPrefix(l, "demo ") {
			bars++
			if !barLine.MatchString(l) {
				t.Errorf("a progress bar shares its line with text: %q", l)
			}
		}
		for _, h := range []string{"kernel entropy:", "decomposition of", "training run:", "online selection", "FID / KID", "pixel clusters", "posterior hallucination", "mse monitoring"} {
			if strings.HasPrefix(l, h) {
				headings++
			}
		}
	}
	if headings != 8 {
		t.Errorf("%d of 8 section headings start a line on the screen:\n%s", headings, strings.Join(lines, "\n"))
	}
	if !strings.Contains(got, "█") {
		t.Errorf("no progress bar drawn on a terminal (%d bar lines)", bars)
	}
}
