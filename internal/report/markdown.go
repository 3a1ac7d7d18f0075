package report

import (
	"io"
	"regexp"
	"strconv"
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
	if meta := r.meta(); meta != "" {
		e.print("*", mdInline(meta), "*\n\n")
	}
	for _, p := range r.Intro {
		if p = mdText(p); p != "" {
			e.print(p, "\n\n")
		}
	}
	if r.contents() {
		e.print("**Contents**\n\n")
		k := 0
		for i, s := range r.Sections {
			if s.Title != "" {
				k++
				e.print(strconv.Itoa(k), ". [", mdInline(s.Title), "](#", anchor(i), ")\n")
			}
		}
		if len(r.References) > 0 {
			e.print(strconv.Itoa(k+1), ". [References](#references)\n")
		}
		e.print("\n")
	}
	toc := r.contents()
	for i, s := range r.Sections {
		if s.Title != "" && toc {
			// The explicit anchor keeps the contents' links stable
			// whatever a renderer does with heading text.
			e.print("<a id=\"", anchor(i), "\"></a>\n\n")
		}
		if s.Title != "" {
			e.print("## ", mdInline(s.Title), "\n\n")
		}
		for _, p := range s.Text {
			if p = mdText(p); p != "" {
				e.print(p, "\n\n")
			}
		}
		if len(s.Commands) > 0 {
			fence := codeFence(s.Commands)
			e.print(fence, "sh\n", strings.Join(s.Commands, "\n"), "\n", fence, "\n\n")
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
	if len(r.References) > 0 {
		e.print("<a id=\"references\"></a>\n\n## References\n\n")
		for i, ref := range r.References {
			e.print(strconv.Itoa(i+1), ". ", mdInline(ref), "\n")
		}
		e.print("\n")
	}
	return e.err
}

// codeFence returns a backtick fence longer than any run of backticks in
// lines, so that no command can close its own code block.
func codeFence(lines []string) string {
	longest := 0
	for _, l := range lines {
		run := 0
		for _, c := range l {
			if c == '`' {
				run++
				longest = max(longest, run)
			} else {
				run = 0
			}
		}
	}
	return strings.Repeat("`", max(3, longest+1))
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
