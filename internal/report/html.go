package report

import (
	"html/template"
	"io"
	"strings"
)

// WriteHTML writes the report to w as a single HTML page with inline CSS
// and images linked relative to the report directory. All text is
// escaped by html/template.
func (r *Report) WriteHTML(w io.Writer) error {
	if err := r.check(); err != nil {
		return err
	}
	return page.Execute(w, htmlPage{r, r.meta(), r.contents()})
}

var page = template.Must(template.New("page").Funcs(template.FuncMap{
	"layout":   func(t Table) layout { return t.layout() },
	"anchor":   anchor,
	"add1":     func(i int) int { return i + 1 },
	"imageURL": imageURL,
	"lines":    func(s string) []string { return paragraphLines(s) },
	"numClass": func(num []bool, i int) string {
		if i < len(num) && num[i] {
			return "num"
		}
		return ""
	},
}).Parse(pageTemplate))

// htmlPage is what the page template sees.
type htmlPage struct {
	*Report
	Meta     string
	Contents bool
}

// paragraphLines splits a plain-text paragraph into its non-blank lines,
// which the page separates with <br>, mirroring the Markdown output.
func paragraphLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// pageTemplate is the HTML page. The CSS is kept small and inline so that
// index.html needs no other file besides the images.
const pageTemplate = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{with .Title}}{{.}}{{else}}genlens report{{end}}</title>
<style>
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; line-height: 1.5; color: #222; background: #fff; max-width: 62rem; margin: 2rem auto; padding: 0 1rem; }
h1 { font-size: 1.8rem; border-bottom: 2px solid #ddd; padding-bottom: .3rem; }
h2 { font-size: 1.35rem; margin-top: 2.2rem; border-bottom: 1px solid #eee; padding-bottom: .2rem; }
table { border-collapse: collapse; margin: 1rem 0; font-size: .92rem; }
caption { caption-side: top; text-align: left; font-style: italic; color: #555; padding-bottom: .3rem; }
th, td { border: 1px solid #d0d7de; padding: .3rem .65rem; text-align: left; vertical-align: top; }
th { background: #f6f8fa; }
tbody tr:nth-child(even) { background: #fafbfc; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
figure { margin: 1.2rem 0; }
figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { font-style: italic; color: #555; font-size: .92rem; }
.meta { color: #666; margin-top: -.5rem; }
nav.contents { background: #f6f8fa; border: 1px solid #d0d7de; padding: .4rem 1.2rem; display: inline-block; }
pre { background: #f6f8fa; border: 1px solid #d0d7de; padding: .6rem .8rem; overflow-x: auto; font-size: .9rem; }
ol.references li { margin: .3rem 0; }
</style>
</head>
<body>
{{- with .Title}}
<h1>{{.}}</h1>
{{- end}}
{{- with .Meta}}
<p class="meta">{{.}}</p>
{{- end}}
{{- range .Intro}}{{with lines .}}
<p>{{range $i, $l := .}}{{if $i}}<br>
{{end}}{{$l}}{{end}}</p>
{{- end}}{{end}}
{{- if .Contents}}
<nav class="contents"><strong>Contents</strong>
<ol>
{{- range $i, $s := .Sections}}{{with $s.Title}}
<li><a href="#{{anchor $i}}">{{.}}</a></li>
{{- end}}{{end}}
{{- if .References}}
<li><a href="#references">References</a></li>
{{- end}}
</ol>
</nav>
{{- end}}
{{- range $i, $s := .Sections}}
<section id="{{anchor $i}}">
{{- with .Title}}
<h2>{{.}}</h2>
{{- end}}
{{- range .Text}}{{with lines .}}
<p>{{range $i, $l := .}}{{if $i}}<br>
{{end}}{{$l}}{{end}}</p>
{{- end}}{{end}}
{{- with .Commands}}
<pre><code>{{range $i, $c := .}}{{if $i}}
{{end}}{{$c}}{{end}}</code></pre>
{{- end}}
{{- range .Tables}}{{$t := layout .}}{{if $t.Header}}
<table>
{{- with .Caption}}
<caption>{{.}}</caption>
{{- end}}
<thead>
<tr>{{range $i, $c := $t.Header}}<th{{with numClass $t.Numeric $i}} class="{{.}}"{{end}}>{{$c}}</th>{{end}}</tr>
</thead>
<tbody>
{{- range $t.Rows}}
<tr>{{range $i, $c := .}}<td{{with numClass $t.Numeric $i}} class="{{.}}"{{end}}>{{$c}}</td>{{end}}</tr>
{{- end}}
</tbody>
</table>
{{- end}}{{end}}
{{- range .Images}}
<figure>
<img src="{{imageURL .File}}" alt="{{.Caption}}">
{{- with .Caption}}
<figcaption>{{.}}</figcaption>
{{- end}}
</figure>
{{- end}}
</section>
{{- end}}
{{- with .References}}
<section id="references">
<h2>References</h2>
<ol class="references">
{{- range .}}
<li>{{.}}</li>
{{- end}}
</ol>
</section>
{{- end}}
</body>
</html>
`
