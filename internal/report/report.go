package report

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/genlens/genlens/internal/atomicfile"
)

// File names written by Report.Write.
const (
	MarkdownFile = "report.md"
	HTMLFile     = "index.html"
)

// Report is a titled sequence of sections. With two or more titled
// sections a table of contents follows the introduction.
type Report struct {
	Title string
	// Version and Date, when set, are shown under the title, so that a
	// report read later says what made it and when.
	Version, Date string
	// Intro holds paragraphs shown before the contents.
	Intro    []string
	Sections []Section
	// References are shown as a numbered list at the end, one entry per
	// cited work in plain text ("Authors. Title. Venue year.").
	References []string
}

// Section is a titled part of a report. Its content is written in the
// order paragraphs, commands, tables, images.
type Section struct {
	Title string
	// Text holds paragraphs of plain text.
	Text []string
	// Commands are shell commands a reader can copy, shown as one code
	// block (one command a line).
	Commands []string
	Tables   []Table
	Images   []Image
}

// anchor is the HTML id of the i-th section, linked from the contents.
func anchor(i int) string { return "section-" + strconv.Itoa(i+1) }

// contents reports whether the report shows a table of contents.
func (r *Report) contents() bool {
	n := 0
	for _, s := range r.Sections {
		if s.Title != "" {
			n++
		}
	}
	return n >= 2
}

// Table is a table of plain-text cells. Rows may be shorter than Header
// (missing cells are empty) or longer (extra columns get empty headings).
// Columns whose non-empty cells all parse as numbers are right-aligned.
type Table struct {
	Caption string
	Header  []string
	Rows    [][]string
}

// Image is a picture shown in a report.
type Image struct {
	// File is the image path relative to the report directory, with
	// either slash or OS-specific separators. It must be local to the
	// directory: absolute paths and paths leading out of it with ".."
	// are rejected, since they would break the report when the
	// directory is moved. The file need not exist when Write is called.
	File string
	// Caption is shown under the image and used as its alternative text.
	Caption string
}

// Write creates dir if needed and writes the report to dir as report.md
// and index.html. Each file is first written to a temporary file in dir
// and then renamed over the destination, so readers see either the old or
// the new version. Other files in dir are never touched.
func (r *Report) Write(dir string) error {
	if err := r.check(); err != nil {
		return err
	}
	// Render both documents before touching the disk, so that a failure
	// cannot leave a new report.md next to an old index.html.
	var md, html bytes.Buffer
	if err := r.WriteMarkdown(&md); err != nil {
		return err
	}
	if err := r.WriteHTML(&html); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if err := writeAtomic(filepath.Join(dir, MarkdownFile), md.Bytes()); err != nil {
		return err
	}
	return writeAtomic(filepath.Join(dir, HTMLFile), html.Bytes())
}

// check reports invalid image paths.
func (r *Report) check() error {
	for i, s := range r.Sections {
		for j, im := range s.Images {
			if im.File == "" {
				return fmt.Errorf("report: section %d (%q), image %d: empty file name", i, s.Title, j)
			}
			if !filepath.IsLocal(filepath.FromSlash(im.File)) {
				return fmt.Errorf("report: section %d (%q), image %d: %q is not a path inside the report directory", i, s.Title, j, im.File)
			}
		}
	}
	return nil
}

// writeAtomic writes b through atomicfile: a reader never sees half a
// report, and a failed write leaves the old one in place.
func writeAtomic(path string, b []byte) error {
	if err := atomicfile.Write(path, func(w io.Writer) error { _, err := w.Write(b); return err }); err != nil {
		return fmt.Errorf("report: writing %s: %w", path, err)
	}
	return nil
}

// imageURL returns File as a relative URL: slash-separated with each
// segment percent-encoded, so that spaces, '#', '?' and parentheses in
// file names survive both Markdown and HTML.
func imageURL(file string) string {
	segs := strings.Split(filepath.ToSlash(file), "/")
	for i, s := range segs {
		segs[i] = pathEscape(s)
	}
	return strings.Join(segs, "/")
}

// pathEscape percent-encodes everything but RFC 3986 unreserved
// characters. Unlike url.PathEscape it also encodes sub-delimiters such
// as '&', which Markdown would read as the start of an entity.
func pathEscape(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.' || c == '~' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

// layout is a table normalised for output: every row, header included,
// has the same number of cells.
type layout struct {
	Header  []string
	Rows    [][]string
	Numeric []bool
}

func (t Table) layout() layout {
	cols := len(t.Header)
	for _, r := range t.Rows {
		cols = max(cols, len(r))
	}
	pad := func(r []string) []string {
		out := make([]string, cols)
		copy(out, r)
		return out
	}
	l := layout{Header: pad(t.Header), Rows: make([][]string, len(t.Rows)), Numeric: make([]bool, cols)}
	for i, r := range t.Rows {
		l.Rows[i] = pad(r)
	}
	for c := range cols {
		num, nonEmpty := true, false
		for _, r := range l.Rows {
			v := strings.TrimSpace(r[c])
			if v == "" {
				continue
			}
			nonEmpty = true
			if _, err := strconv.ParseFloat(v, 64); err != nil {
				num = false
				break
			}
		}
		l.Numeric[c] = num && nonEmpty
	}
	return l
}

// errWriter records the first write error so that renderers can write
// unconditionally and check once.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) print(a ...string) {
	for _, s := range a {
		if e.err != nil {
			return
		}
		_, e.err = io.WriteString(e.w, s)
	}
}

// meta is the line under the title: version and date, when known.
func (r *Report) meta() string {
	switch {
	case r.Version != "" && r.Date != "":
		return r.Version + " · " + r.Date
	case r.Version != "":
		return r.Version
	}
	return r.Date
}
