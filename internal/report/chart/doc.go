// Package chart draws the small set of figures genlens reports need:
// heat maps of square matrices (for example the distributional correlation
// between training epochs), line charts with optional uncertainty bands,
// overlaid histograms, ROC curves and bar charts.
//
// Each kind of figure has a constructor, NewLines, NewHeatmap, ..., that
// checks the data and returns a Figure; Figure.Encode draws it to an
// io.Writer as PNG (rendered at 150 dots per inch) or SVG, and
// Figure.Save to a file whose extension, ".png" or ".svg", chooses the
// format. Lines, Heatmap, ... do both for a path. Files are written
// atomically: the figure is rendered to a temporary file in the
// destination directory which is then renamed, so a reader never sees a
// half-written chart.
//
// Invalid input (empty, ragged or non-square matrices, mismatched slice
// lengths, non-finite values where a position is needed) is reported as an
// error rather than a panic, because a malformed figure should not abort a
// long evaluation run. Panics raised inside gonum.org/v1/plot while drawing
// are recovered and returned as errors for the same reason.
//
// The package is a thin layer over gonum.org/v1/plot; it fixes sizes, fonts
// and colours so that figures from different runs look alike.
package chart // import "github.com/genlens/genlens/internal/report/chart"
