package main

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/genlens/genlens/internal/console/ptytest"
)

var barLine = regexp.MustCompile(`^demo +\d+% \|[█ ]*\| \(\d+/\d+\) \[[^\]]*\]$`)

// The demo in a real terminal (a pty): its progress bar must never share
// a line with the text the sections print.
func TestDemoProgressUnderPTY(t *testing.T) {
	var code int
	got := ptytest.Run(t, func(tty *os.File) { code = run([]string{"demo", "--out", t.TempDir()}, tty, tty) })
	if code != 0 {
		t.Fatalf("demo exit %d:\n%s", code, got)
	}
	lines := ptytest.Screen(got)
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
