package console

import (
	"bytes"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/genlens/genlens/internal/console/ptytest"
)

func TestEscape(t *testing.T) {
	for in, want := range map[string]string{
		"plain\ttext\n":     "plain\ttext\n",
		"é ü 日本":            "é ü 日本",
		"\x1b]0;title\x07":  `\x1b]0;title\a`,
		"a\x00b\x7fc":       `a\x00b\x7fc`,
		"bad \xff utf-8":    "bad \xff utf-8",
		"csi \u009b1m done": `csi \u009b1m done`,
	} {
		if got := string(Escape([]byte(in))); got != want {
			t.Errorf("Escape(%q) = %q, want %q", in, got, want)
		}
	}
}

// The download draws a byte bar on a terminal. stderr reaches Download
// wrapped as the run's console writer; the bar once looked for an
// *os.File directly and so was never drawn.
func TestDownloadUnderPTY(t *testing.T) {
	out := ptytest.Run(t, func(tty *os.File) {
		_, errw := New(tty, tty)
		progress := Download(errw, "downloading the weights (once)", "weights")
		const total = 100 << 20
		for done := int64(0); done <= total; done += total / 4 {
			progress(done, total)
		}
	})
	if !strings.Contains(out, "downloading the weights (once)") {
		t.Errorf("no announcement:\n%q", out)
	}
	if !strings.Contains(out, "50%") {
		t.Errorf("no byte progress bar on a terminal:\n%q", out)
	}
}

// Off a terminal the bars draw nothing: only the download's announcement
// reaches a pipe or a log.
func TestNoBarsOffTerminal(t *testing.T) {
	var stdout, stderr bytes.Buffer
	out, errw := New(&stdout, &stderr)
	report, finish := Stages(errw, "images")
	mreport, meter, mfinish := Meter(errw, "sample", "prompts", "tokens")
	download := Download(errw, "downloading", "weights")
	for d := 1; d <= 10; d++ {
		report(d, 10)
		meter("tokens", 5)
		mreport(d, 10)
		download(int64(d), 10)
	}
	finish()
	mfinish()
	io.WriteString(out, "result\n")
	if stdout.String() != "result\n" || stderr.String() != "downloading\n" {
		t.Errorf("stdout %q, stderr %q: want the result and the announcement alone", stdout.String(), stderr.String())
	}
}

// The images stage shows no rate until it means something: the first
// items (from the feature cache, in microseconds) once claimed 70,567
// images/s. After a second and a few items the rate is the mean since
// the stage began.
func TestProgressRateWaits(t *testing.T) {
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	defer func(f func() time.Time) { Clock = f }(Clock)
	Clock = func() time.Time { return clock }
	var early string
	got := ptytest.Run(t, func(tty *os.File) {
		_, errw := New(tty, tty)
		report, finish := Stages(errw, "images")
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
