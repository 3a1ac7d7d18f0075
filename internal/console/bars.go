package console

import (
	"fmt"
	"io"
	"path"
	"time"

	"github.com/schollz/progressbar/v3"
)

// Clock is the progress bars' clock (a test sets its own).
var Clock = time.Now

// Stages returns a job's progress callback that draws one bar per stage
// of the job on stderr when stderr is a terminal, and nothing otherwise.
// A stage ends when its total changes or its count goes back; labels
// name the stages in order, the last one any further; a stage labelled
// "images" or "features" shows images/s once the rate means something
// (rateText), and a stage of fewer than 2 steps draws no bar.
func Stages(stderr io.Writer, labels ...string) (report func(done, total int), finish func()) {
	cw, f, ok := terminal(stderr)
	if !ok {
		return func(int, int) {}, func() {}
	}
	var bar, prev *progressbar.ProgressBar
	open, stage, ticked, last := false, -1, 0, -1
	var label string
	var started, described time.Time
	rate := false // the stage shows images/s
	finish = func() {
		cw.c.mu.Lock()
		defer cw.c.mu.Unlock()
		if bar != nil {
			_ = bar.Finish()
			cw.c.bar, cw.c.shown = prev, false
		}
		bar, open = nil, false
	}
	report = func(d, total int) {
		if !open || total != last || d < ticked {
			finish()
			stage++
			open, ticked, last = true, 0, total
			label = labels[min(stage, len(labels)-1)]
			started, described = Clock(), time.Time{}
			rate = label == "images" || label == "features"
			opts := []progressbar.Option{
				progressbar.OptionSetWriter(f),
				progressbar.OptionSetDescription(label),
				progressbar.OptionShowCount(),
				progressbar.OptionThrottle(100_000_000),
				progressbar.OptionClearOnFinish(),
			}
			if total >= 2 {
				cw.c.mu.Lock()
				bar, prev = progressbar.NewOptions(total, opts...), cw.c.bar
				cw.c.bar = bar
				cw.c.mu.Unlock()
			}
		}
		cw.c.mu.Lock()
		defer cw.c.mu.Unlock()
		if now := Clock(); bar != nil && rate && d > ticked && now.Sub(described) >= 500*time.Millisecond {
			if txt := rateText(d, now.Sub(started)); txt != "" {
				bar.Describe(label + " (" + txt + ")") // drawn by the next Add
				described = now
			}
		}
		for ; ticked < d; ticked++ {
			if bar != nil {
				_ = bar.Add(1)
				cw.c.shown = true
			}
		}
	}
	return report, finish
}

// Thresholds below which a stage shows no rate: the first batch of a
// stage may come from the feature cache within microseconds, and a rate
// over it ("70567 images/s") says nothing of the run.
const (
	minRateElapsed = time.Second
	minRateItems   = 4
)

// rateText is the images/s of done images in elapsed time, or "" until
// both thresholds are passed.
func rateText(done int, elapsed time.Duration) string {
	if elapsed < minRateElapsed || done < minRateItems {
		return ""
	}
	return fmt.Sprintf("%.3g images/s", float64(done)/elapsed.Seconds())
}

// Meter returns a job's progress and meter callbacks that draw one bar of
// steps (unit, a rate a second, and the time left) with the rate of the
// metered quantity in its description, on stderr when stderr is a
// terminal, and nothing otherwise.
func Meter(stderr io.Writer, label, unit, metered string) (report func(done, total int), meter func(string, int64), finish func()) {
	cw, f, ok := terminal(stderr)
	if !ok {
		return func(int, int) {}, func(string, int64) {}, func() {}
	}
	var (
		bar   *progressbar.ProgressBar
		prev  *progressbar.ProgressBar
		count int64
		start = time.Now()
		shown int
	)
	finish = func() {
		cw.c.mu.Lock()
		defer cw.c.mu.Unlock()
		if bar != nil {
			_ = bar.Finish()
			cw.c.bar, cw.c.shown = prev, false
		}
		bar = nil
	}
	report = func(done, total int) {
		cw.c.mu.Lock()
		defer cw.c.mu.Unlock()
		if bar == nil {
			if total < 1 {
				return
			}
			bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(f), progressbar.OptionSetDescription(label),
				progressbar.OptionShowCount(), progressbar.OptionShowIts(), progressbar.OptionSetItsString(unit),
				progressbar.OptionSetPredictTime(true), progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish())
			prev, cw.c.bar = cw.c.bar, bar
			start = time.Now()
		}
		if done > shown {
			if el := time.Since(start).Seconds(); el > 0 {
				bar.Describe(fmt.Sprintf("%s %.0f %s/s", label, float64(count)/el, metered))
			}
			_ = bar.Add(done - shown)
			shown = done
			cw.c.shown = true
		}
	}
	meter = func(name string, delta int64) {
		if name == metered {
			cw.c.mu.Lock()
			count += delta
			cw.c.mu.Unlock()
		}
	}
	return report, meter, finish
}

// Download returns a byte progress callback for a download: announce as
// one line on stderr at its first call, then a bar labelled label when
// stderr is a terminal.
func Download(stderr io.Writer, announce, label string) func(done, total int64) {
	var bar *progressbar.ProgressBar
	announced := false
	return func(done, total int64) {
		if !announced {
			announced = true
			fmt.Fprintln(stderr, announce)
			// stderr is the run's console writer (one bar at a time), so
			// the terminal test looks at the file underneath.
			if _, f, ok := terminal(stderr); ok {
				bar = progressbar.NewOptions64(total, progressbar.OptionSetWriter(f), progressbar.OptionShowBytes(true),
					progressbar.OptionSetDescription(label), progressbar.OptionClearOnFinish())
			}
		}
		if bar != nil {
			_ = bar.Set64(done)
		}
	}
}

// Fetch returns the progress callback of models fetched by name (package
// hub): a line naming each file as its download starts, then its bar
// (Download).
func Fetch(stderr io.Writer) func(url string, done, total int64) {
	var cur string
	var report func(done, total int64)
	return func(url string, done, total int64) {
		if url != cur {
			cur = url
			report = Download(stderr, "genlens: downloading (once) "+url, path.Base(url))
		}
		report(done, total)
	}
}
