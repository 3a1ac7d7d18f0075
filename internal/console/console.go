package console

import (
	"io"
	"os"
	"slices"
	"strconv"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// console keeps a progress bar (on stderr) and text (on stdout, or
// warnings on stderr) off each other's lines when they share a terminal:
// every write first erases the bar, which its next tick draws again below
// the text. Without it a bar drawn without a newline is glued to the next
// line a command prints ("demo 14% |███| (1/7)decomposition of ...").
type console struct {
	mu    sync.Mutex
	bar   *progressbar.ProgressBar
	shown bool // the bar may be on the screen
}

// writer is stdout or stderr of one run of the command line.
type writer struct {
	c *console
	w io.Writer
}

// Write writes p with its control characters escaped (see Escape): every
// message, warning and table of the command line passes here, and names
// a user gave (file names, ids, labels) reach them verbatim.
func (cw writer) Write(p []byte) (int, error) {
	cw.c.mu.Lock()
	if cw.c.bar != nil && cw.c.shown {
		_ = cw.c.bar.Clear()
		cw.c.shown = false
	}
	cw.c.mu.Unlock()
	if _, err := cw.w.Write(Escape(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// New wraps a run's stdout and stderr so that they share one bar. The
// bars of this package draw only on a stderr New returned.
func New(stdout, stderr io.Writer) (out, errw io.Writer) {
	c := &console{}
	return writer{c, stdout}, writer{c, stderr}
}

// terminal returns the console writer w is and the terminal underneath
// it, or ok false when w is not a console writer over a terminal (CI logs
// and pipes get no bars).
func terminal(w io.Writer) (cw writer, f *os.File, ok bool) {
	cw, _ = w.(writer)
	f, ok = cw.w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return cw, nil, false
	}
	return cw, f, true
}

// Escape returns p with every control character but newline and tab
// written as Go writes it in a quoted string (\x1b, \r, \u009b): a file
// named with a terminal escape sequence must print as its name, not
// recolour, move or retitle the terminal. p itself is returned when it
// has none, as nearly always.
func Escape(p []byte) []byte {
	if !slices.ContainsFunc(p, func(b byte) bool { return b < 0x20 && b != '\n' && b != '\t' || b == 0x7f || b == 0xc2 }) {
		return p
	}
	out := make([]byte, 0, len(p)+16)
	for i := 0; i < len(p); {
		r, size := utf8.DecodeRune(p[i:])
		if r == '\n' || r == '\t' || !unicode.IsControl(r) {
			out = append(out, p[i:i+size]...)
		} else {
			q := strconv.QuoteRune(r) // '\x1b'
			out = append(out, q[1:len(q)-1]...)
		}
		i += size
	}
	return out
}
