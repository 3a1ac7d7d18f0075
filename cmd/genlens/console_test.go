package main

import (
	"bytes"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

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

// The weights download draws a byte bar on a terminal. stderr reaches
// downloadBar wrapped as the run's console writer; the bar once looked for
// an *os.File directly and so was never drawn.
func TestDownloadBarUnderPTY(t *testing.T) {
	out := underPTY(t, func(tty *os.File) {
		_, errw := newConsole(tty, tty)
		progress := downloadBar(errw)
		const total = 100 << 20
		for done := int64(0); done <= total; done += total / 4 {
			progress(done, total)
		}
	})
	if !strings.Contains(out, "downloading the Inception weights") {
		t.Errorf("no announcement:\n%q", out)
	}
	if !strings.Contains(out, "50%") {
		t.Errorf("no byte progress bar on a terminal:\n%q", out)
	}
}

// The images stage shows no rate until it means something: the first
// items (from the feature cache, in microseconds) once claimed 70,567
// images/s. After a second and a few items the rate is the mean since
// the stage began.
func TestProgressRateWaits(t *testing.T) {
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	defer func(f func() time.Time) { barClock = f }(barClock)
	barClock = func() time.Time { return clock }
	var early string
	got := underPTY(t, func(tty *os.File) {
		_, errw := newConsole(tty, tty)
		report, finish := stageBars(errw, "images")
		for d := 1; d <= 3; d++ {
			clock = clock.Add(20 * time.Microsecond)
			report(d, 100)
		}
		clock = clock.Add(300 * time.Millisecond)
		report(50, 100)                    // many items, too little time
		time.Sleep(150 * time.Millisecond) // past the bar's render throttle
		early = "marker"
		clock = clock.Add(1700 * time.Millisecond) // 2 s since the stage began
		report(60, 100)
		time.Sleep(150 * time.Millisecond)
		report(61, 100)
		finish()
	})
	if early == "" {
		t.Fatal("did not run")
	}
	// 60 images in 2 s: 30 images/s, and no other rate before it.
	rates := regexp.MustCompile(`[0-9.e+]+ images/s`).FindAllString(got, -1)
	if len(rates) == 0 {
		t.Fatalf("no rate shown:\n%q", got)
	}
	for _, r := range rates {
		if r != "30 images/s" {
			t.Errorf("rate %q, want only 30 images/s:\n%q", r, got)
		}
	}
}

func TestRateText(t *testing.T) {
	for _, c := range []struct {
		done    int
		elapsed time.Duration
		want    string
	}{
		{1, 14 * time.Microsecond, ""}, // the first cached image
		{100, 500 * time.Millisecond, ""},
		{3, 5 * time.Second, ""},
		{4, 2 * time.Second, "2 images/s"},
		{1000, 4 * time.Second, "250 images/s"},
	} {
		if got := rateText(c.done, c.elapsed); got != c.want {
			t.Errorf("rateText(%d, %v) = %q, want %q", c.done, c.elapsed, got, c.want)
		}
	}
}
