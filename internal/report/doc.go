// Package report writes evaluation results as a small, self-contained
// report directory: report.md (GitHub-flavoured Markdown) and index.html
// (a single HTML page with inline CSS), both describing the same sections
// of paragraphs, tables and images.
//
// Images are referenced by relative links, so the directory can be moved,
// archived or served as a whole; typically the charts are written into the
// same directory with package genlens/chart before calling Write.
//
// All text is plain text: it is escaped for Markdown and HTML, so model
// names such as "gpt_4" or values such as "a|b" and "<script>" appear
// literally in both outputs. Write replaces report.md and index.html
// atomically and leaves every other file in the directory alone.
package report // import "github.com/genlens/genlens/internal/report"
