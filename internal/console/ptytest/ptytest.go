package ptytest

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/creack/pty"
)

// Run runs fn with a pseudo-terminal as its terminal and returns what fn
// wrote to it; the test skips where no pty can be opened.
func Run(t testing.TB, fn func(tty *os.File)) string {
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

// Screen replays terminal output as a terminal shows it: '\r' returns
// to the start of the line, later characters overwrite earlier ones.
func Screen(out string) []string {
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
