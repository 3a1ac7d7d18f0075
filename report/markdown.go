package report

import (
	"io"
	"regexp"
	"strings"
)

// WriteMarkdown writes the report to w as GitHub-flavoured Markdown,
// with images linked relative to the report directory.
func (r *Report) WriteMarkdown(w io.Writer) error {
	if err := r.check(); err != nil {
		return err
	}
	e := &errWriter{w: w}
	if r.Title != "" {
		e.print("# ", mdInline(r.Title), "\n\n")
	}
	for _, s := range r.Sections {
		if s.Title != "" {
			e.print("## ", mdInline(s.Title), "\n\n")
		}
		for _, p := range s.Text {
			if p = mdText(p); p != "" {
				e.print(p, "\n\n")
			}
		}
		for _, t := range s.Tables {
			mdTable(e, t)
		}
		for _, im := range s.Images {
			e.print("![", mdInline(im.Caption), "](", imageURL(im.File), ")\n\n")
			if im.Caption != "" {
				e.print("*", mdInline(im.Caption), "*\n\n")
			}
		}
	}
	return e.err
}

func mdTable(e *errWriter, t Table) {
	l := t.layout()
	if len(l.Header) == 0 {
		// A table without columns has nothing to show; GFM cannot
		// express it anyway.
		return
	}
	if t.Caption != "" {
		e.print("*", mdInline(t.Caption), "*\n\n")
	}
	row := func(cells []string) {
		e.print("|")
		for _, c := range cells {
			e.print(" ", mdCell(c), " |")
		}
		e.print("\n")
	}
	row(l.Header)
	e.print("|")
	for _, num := range l.Numeric {
		if num {
			e.print(" ---: |")
		} else {
			e.print(" --- |")
		}
	}
	e.print("\n")
	for _, r := range l.Rows {
		row(r)
	}
	e.print("\n")
}

var (
	// mdSpecial are characters that can start inline markup (or, for
	// '#', a heading's closing sequence) anywhere in a line. Escaping
	// them all is noisy in the source but always correct.
	mdSpecial = strings.NewReplacer(
		`\`, `\\`, "`", "\\`", `*`, `\*`, `_`, `\_`, `#`, `\#`,
		`[`, `\[`, `]`, `\]`, `<`, `\<`, `>`, `\>`, `|`, `\|`,
	)
	// mdEntity matches named character references, which Markdown would
	// decode; the '&' is escaped so they show literally. Numeric ones
	// are already defused by the escaped '#'.
	mdEntity = regexp.MustCompile(`&([A-Za-z][A-Za-z0-9]*);`)
	// mdBlockStart matches the start of a line that would open a block
	// other than a paragraph: a bullet item, thematic break or setext
	// underline (group 1), a code fence (group 1) or an ordered list item
	// (group 2 is its delimiter). Headings and quotes are covered by
	// mdSpecial.
	mdBlockStart = regexp.MustCompile(`^(?:([-+=]|~~~)|[0-9]{1,9}([.)])(?:\s|$))`)
)

// mdEscape backslash-escapes s so that Markdown renders it literally
// within a line.
func mdEscape(s string) string {
	s = mdSpecial.Replace(s)
	return mdEntity.ReplaceAllString(s, `\&$1;`)
}

// mdInline escapes s for use within one line (heading, caption, cell):
// line breaks become spaces.
func mdInline(s string) string {
	return mdEscape(strings.Join(strings.Fields(s), " "))
}

// mdCell escapes a table cell. Escaping '|' is what keeps the column
// structure intact.
func mdCell(s string) string { return mdInline(s) }

// mdText escapes a paragraph, keeping its line breaks but dropping blank
// lines, which would split it into several paragraphs, and leading
// spaces, which could make it a code block.
func mdText(s string) string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		l = mdEscape(l)
		if m := mdBlockStart.FindStringSubmatchIndex(l); m != nil {
			i := m[2]
			if i < 0 {
				i = m[4]
			}
			l = l[:i] + `\` + l[i:]
		}
		lines = append(lines, l)
	}
	return strings.Join(lines, "\n")
}
