package chart

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/genlens/genlens/internal/atomicfile"
)

// dpi is the resolution of PNG output. 150 dpi keeps a 5x4 inch chart
// sharp on high-density screens while staying well under 100 kB.
const dpi = 150

// Figure sizes. The heat map is larger and near square so that the cells
// of a square matrix stay square next to the colour bar.
const (
	chartWidth    = 5 * vg.Inch
	chartHeight   = 4 * vg.Inch
	heatmapWidth  = 6 * vg.Inch
	heatmapHeight = 5.5 * vg.Inch
)

// sans is used instead of plot's default serif face: sans-serif text is
// easier to read at the small sizes used for tick labels.
var sans = font.Font{Typeface: "Liberation", Variant: "Sans"}

// errFormat is returned (wrapped) for a format, or a path's extension,
// that is neither PNG nor SVG.
var errFormat = errors.New("chart: unsupported format (want .png or .svg)")

// Format is the encoding of a figure: PNG (rendered at 150 dots per inch)
// or SVG.
type Format string

const (
	PNG Format = "png"
	SVG Format = "svg"
)

// FormatOf returns the format of a path's extension, .png or .svg (any
// case), and an error for any other.
func FormatOf(path string) (Format, error) {
	switch f := Format(strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), ".")); f {
	case PNG, SVG:
		return f, nil
	}
	return "", fmt.Errorf("%w: %q", errFormat, path)
}

// Figure is a chart ready to be encoded: the NewX functions check their
// data and lay the figure out; Encode draws it to a writer and Save to a
// file.
type Figure struct {
	width, height vg.Length
	draw          func(c draw.Canvas)
}

// Encode draws the figure in format f to w.
func (fig *Figure) Encode(w io.Writer, f Format) error {
	cw, err := fig.canvas(f)
	if err != nil {
		return err
	}
	_, err = cw.WriteTo(w)
	return err
}

// Save writes the figure atomically to path, in the format of its
// extension (see FormatOf).
func (fig *Figure) Save(path string) error {
	f, err := FormatOf(path)
	if err != nil {
		return err
	}
	cw, err := fig.canvas(f)
	if err != nil {
		return fmt.Errorf("%w (%s)", err, path)
	}
	return writeAtomic(path, cw)
}

// canvas draws the figure on a canvas of format f.
func (fig *Figure) canvas(f Format) (cw vg.CanvasWriterTo, err error) {
	switch f {
	case PNG:
		cw = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(fig.width, fig.height), vgimg.UseDPI(dpi))}
	case SVG:
		cw = vgsvg.New(fig.width, fig.height)
	default:
		return nil, fmt.Errorf("%w: format %q", errFormat, f)
	}
	// gonum/plot reports some invalid states (for example an empty
	// palette or an inverted axis range) by panicking. Validation in the
	// NewX functions should prevent them; recovering is the last line of
	// defence.
	defer func() {
		if r := recover(); r != nil {
			cw, err = nil, fmt.Errorf("chart: drawing: %v", r)
		}
	}()
	fig.draw(draw.New(cw))
	return cw, nil
}

// save checks path's format before any drawing, so that a typo in a file
// name fails fast, then builds the figure with build and saves it.
func save(path string, build func() (*Figure, error)) error {
	if _, err := FormatOf(path); err != nil {
		return err
	}
	fig, err := build()
	if err != nil {
		return err
	}
	return fig.Save(path)
}

// seriesColors is the Okabe–Ito palette without its yellow (which is
// unreadable on white). It is distinguishable under the common forms of
// colour blindness.
var seriesColors = []color.NRGBA{
	{R: 0x00, G: 0x72, B: 0xb2, A: 0xff}, // blue
	{R: 0xd5, G: 0x5e, B: 0x00, A: 0xff}, // vermillion
	{R: 0x00, G: 0x9e, B: 0x73, A: 0xff}, // bluish green
	{R: 0xcc, G: 0x79, B: 0xa7, A: 0xff}, // reddish purple
	{R: 0xe6, G: 0x9f, B: 0x00, A: 0xff}, // orange
	{R: 0x56, G: 0xb4, B: 0xe9, A: 0xff}, // sky blue
	{R: 0x00, G: 0x00, B: 0x00, A: 0xff}, // black
	{R: 0x99, G: 0x99, B: 0x99, A: 0xff}, // grey
}

// seriesColor returns the i-th series colour with the given opacity.
// Colours repeat after len(seriesColors) series.
func seriesColor(i int, alpha uint8) color.NRGBA {
	c := seriesColors[i%len(seriesColors)]
	c.A = alpha
	return c
}

// newPlot returns a plot with genlens' common text styling.
func newPlot(title, xlabel, ylabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font = font.From(sans, 14)
	p.Title.Padding = vg.Points(8)
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = font.From(sans, 12)
		a.Tick.Label.Font = font.From(sans, 10)
	}
	p.Legend.TextStyle.Font = font.From(sans, 10)
	return p
}

// writeAtomic writes wt through atomicfile, so that concurrent readers (a
// browser refreshing a report) never see a truncated image.
func writeAtomic(path string, wt io.WriterTo) error {
	if err := atomicfile.Write(path, func(w io.Writer) error { _, err := wt.WriteTo(w); return err }); err != nil {
		return fmt.Errorf("chart: writing %s: %w", path, err)
	}
	return nil
}

// finite reports whether v is neither NaN nor infinite.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
