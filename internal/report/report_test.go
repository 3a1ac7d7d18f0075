package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func sample() *Report {
	return &Report{
		Title: "Evaluation of <model> & friends",
		Sections: []Section{
			{
				Title: "Kernel entropy",
				Text: []string{
					"Entropy rises with epoch.",
					"Contains <script>alert('x')</script> and a|pipe.",
					"- not a list\n1. not a list either\n\n# not a heading",
				},
				Tables: []Table{{
					Caption: "Scores | by model",
					Header:  []string{"model", "entropy", "note"},
					Rows: [][]string{
						{"gpt_4", "1.25", "a|b"},
						{"llama", "-0.5"},
						{"x", "", "line\nbreak", "extra"},
					},
				}},
				Images: []Image{
					{File: "entropy.png", Caption: "Kernel entropy per epoch"},
					{File: "sub dir/roc (1).png"},
				},
			},
			{Title: "Empty section"},
		},
	}
}

func TestWriteMarkdown(t *testing.T) {
	var b bytes.Buffer
	if err := sample().WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{
		"# Evaluation of \\<model\\> & friends\n",
		"## Kernel entropy\n",
		"## Empty section\n",
		"Entropy rises with epoch.\n\n",
		"Contains \\<script\\>alert('x')\\</script\\> and a\\|pipe.\n\n",
		"\\- not a list\n1\\. not a list either\n\\# not a heading\n\n",
		"*Scores \\| by model*\n\n",
		"| model | entropy | note |  |\n",
		"| --- | ---: | --- | --- |\n",
		"| gpt\\_4 | 1.25 | a\\|b |  |\n",
		"| llama | -0.5 |  |  |\n",
		"| x |  | line break | extra |\n",
		"![Kernel entropy per epoch](entropy.png)\n\n*Kernel entropy per epoch*\n",
		"![](sub%20dir/roc%20%281%29.png)\n",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q\n--- got ---\n%s", want, md)
		}
	}
	if strings.Contains(md, "<script>") {
		t.Error("Markdown contains an unescaped <script>")
	}
}

func TestWriteHTML(t *testing.T) {
	var b bytes.Buffer
	if err := sample().WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	h := b.String()
	for _, want := range []string{
		"<!DOCTYPE html>",
		"<title>Evaluation of &lt;model&gt; &amp; friends</title>",
		"<h1>Evaluation of &lt;model&gt; &amp; friends</h1>",
		"<h2>Kernel entropy</h2>",
		"<h2>Empty section</h2>",
		"&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;",
		"<caption>Scores | by model</caption>",
		`<tr><th>model</th><th class="num">entropy</th><th>note</th><th></th></tr>`,
		`<tr><td>gpt_4</td><td class="num">1.25</td><td>a|b</td><td></td></tr>`,
		`<img src="entropy.png" alt="Kernel entropy per epoch">`,
		"<figcaption>Kernel entropy per epoch</figcaption>",
		`<img src="sub%20dir/roc%20%281%29.png" alt="">`,
		"- not a list<br>\n1. not a list either<br>\n# not a heading</p>",
	} {
		if !strings.Contains(h, want) {
			t.Errorf("HTML lacks %q\n--- got ---\n%s", want, h)
		}
	}
	if strings.Contains(h, "<script>") {
		t.Error("HTML contains an unescaped <script>")
	}
}

func TestWrite(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "report")
	other := filepath.Join(dir, "entropy.png")
	r := sample()

	if err := r.Write(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(other, []byte("png"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Writing again replaces the report and leaves other files alone.
	r.Title = "Second version"
	if err := r.Write(dir); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{MarkdownFile, HTMLFile} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(b, []byte("Second version")) {
			t.Errorf("%s was not rewritten", name)
		}
	}
	if b, err := os.ReadFile(other); err != nil || string(b) != "png" {
		t.Errorf("other file changed: %q, %v", b, err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 3 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("directory holds %v, want report.md, index.html and entropy.png only", names)
	}
}

func TestWriteErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		file string
	}{
		{"empty", ""},
		{"absolute", "/etc/passwd"},
		{"parent", "../x.png"},
		{"parent inside", "a/../../x.png"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			r := &Report{Sections: []Section{{Images: []Image{{File: tc.file}}}}}
			if err := r.Write(dir); err == nil {
				t.Fatal("expected an error")
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 0 {
				t.Errorf("failed Write left %d files", len(ents))
			}
		})
	}

	// dir exists as a regular file.
	f := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := sample().Write(f); err == nil {
		t.Error("Write into a regular file: expected an error")
	}
}

func TestMarkdownEscape(t *testing.T) {
	for _, tc := range []struct {
		in, inline, text string
	}{
		{"plain", "plain", "plain"},
		{"a*b*c", `a\*b\*c`, `a\*b\*c`},
		{"x_y", `x\_y`, `x\_y`},
		{"`code`", "\\`code\\`", "\\`code\\`"},
		{"[link](x)", `\[link\](x)`, `\[link\](x)`},
		{`back\slash`, `back\\slash`, `back\\slash`},
		{"&amp; and &#38; and AT&T", `\&amp; and &\#38; and AT&T`, `\&amp; and &\#38; and AT&T`},
		{"# h", `\# h`, `\# h`},
		{"> quote", `\> quote`, `\> quote`},
		{"- item", "- item", `\- item`},
		{"+ item", "+ item", `\+ item`},
		{"-0.5", "-0.5", `\-0.5`},
		{"===", "===", `\===`},
		{"~~~", "~~~", `\~~~`},
		{"12. item", "12. item", `12\. item`},
		{"3) item", "3) item", `3\) item`},
		{"0.81 is the AUC", "0.81 is the AUC", "0.81 is the AUC"},
		{"  two\n\n lines ", "two lines", "two\nlines"},
	} {
		if got := mdInline(tc.in); got != tc.inline {
			t.Errorf("mdInline(%q) = %q, want %q", tc.in, got, tc.inline)
		}
		if got := mdText(tc.in); got != tc.text {
			t.Errorf("mdText(%q) = %q, want %q", tc.in, got, tc.text)
		}
	}
}

func TestIntroContentsCommandsReferences(t *testing.T) {
	r := &Report{
		Title:   "genlens demo",
		Version: "genlens v1.2.0",
		Date:    "2026-11-25",
		Intro:   []string{"What this report is."},
		Sections: []Section{
			{Title: "First", Text: []string{"one"}, Commands: []string{"genlens entropy --in a.jsonl", "echo `date` ``x``"}},
			{Title: "Second", Text: []string{"two"}},
		},
		References: []string{"A. Author. A Title. ICML 2024."},
	}
	var md, html bytes.Buffer
	if err := r.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteHTML(&html); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"*genlens v1.2.0 · 2026-11-25*",
		"What this report is.",
		"1. [First](#section-1)\n2. [Second](#section-2)\n3. [References](#references)",
		"<a id=\"section-2\"></a>\n\n## Second",
		"```sh\ngenlens entropy --in a.jsonl\necho `date` ``x``\n```", // fence longer than `` in a command
		"## References\n\n1. A. Author. A Title. ICML 2024.",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md.String())
		}
	}
	// The intro comes before the contents, the contents before the first section.
	if i, j, k := strings.Index(md.String(), "What this"), strings.Index(md.String(), "**Contents**"), strings.Index(md.String(), "## First"); !(i < j && j < k) {
		t.Errorf("order intro %d, contents %d, first section %d", i, j, k)
	}
	for _, want := range []string{
		`<p class="meta">genlens v1.2.0 · 2026-11-25</p>`,
		`<li><a href="#section-1">First</a></li>`,
		`<section id="section-2">`,
		"<pre><code>genlens entropy --in a.jsonl\necho `date` ``x``</code></pre>",
		`<section id="references">`,
		`<li>A. Author. A Title. ICML 2024.</li>`,
	} {
		if !strings.Contains(html.String(), want) {
			t.Errorf("HTML lacks %q:\n%s", want, html.String())
		}
	}
}
