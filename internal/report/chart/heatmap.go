package chart

import (
	"fmt"
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Heat map layout and annotation limits.
const (
	// maxAnnotated is the largest matrix whose cell values are written
	// into the cells; beyond it the numbers no longer fit.
	maxAnnotated = 12
	// maxTickLabels bounds the number of tick labels per axis; larger
	// matrices label every k-th row and column.
	maxTickLabels = 20
	// paletteSize is the number of colour steps; more than the eye can
	// separate, so the quantisation is invisible.
	paletteSize = 256
)

// nanColor marks missing cells. It is darker than the palette's light
// midpoint so that a missing value is not mistaken for a zero.
var nanColor = color.NRGBA{R: 0x80, G: 0x80, B: 0x80, A: 0xff}

// NewHeatmap draws the square matrix m as a heat map with a colour bar.
// Row i of m is drawn as the i-th row from the top, as a matrix is read,
// and column j as the j-th column from the left.
//
// labels names the rows and columns; nil labels them 0..n-1. Matrices
// larger than about 20 rows label only every k-th row and column. When n
// is at most 12 each cell is annotated with its value. The colour scale spans
// [lo, hi]; values outside it get the end colours. Passing NaN for both lo
// and hi uses the range of the finite entries of m instead. NaN cells are
// drawn mid grey.
//
// The palette is Moreland's smooth blue–red diverging map, which is
// perceptually uniform and has its white midpoint at (lo+hi)/2, so that a
// correlation matrix drawn with lo=-1, hi=1 shows zero as white.
//
// NewHeatmap returns an error if m is empty, ragged or not square, if labels
// has the wrong length, or if lo and hi are not a valid range.
func NewHeatmap(title string, m [][]float64, labels []string, lo, hi float64) (*Figure, error) {
	n := len(m)
	if n == 0 {
		return nil, fmt.Errorf("chart: heatmap: empty matrix")
	}
	for i, row := range m {
		if len(row) != n {
			return nil, fmt.Errorf("chart: heatmap: matrix is not square: row %d has %d columns, want %d", i, len(row), n)
		}
	}
	if labels == nil {
		labels = make([]string, n)
		for i := range labels {
			labels[i] = strconv.Itoa(i)
		}
	}
	if len(labels) != n {
		return nil, fmt.Errorf("chart: heatmap: %d labels for a %d×%d matrix", len(labels), n, n)
	}
	// Long names (file paths, upload ids) would leave the matrix no room:
	// cut their middle, where names of one run differ least.
	short := make([]string, n)
	for i, l := range labels {
		short[i] = middleEllipsis(l, maxHeatmapLabel)
	}
	labels = short
	lo, hi, err := colorRange(m, lo, hi)
	if err != nil {
		return nil, err
	}

	cmap := moreland.SmoothBlueRed()
	cmap.SetMax(hi)
	cmap.SetMin(lo)
	pal := cmap.Palette(paletteSize)
	colors := pal.Colors()

	hm := plotter.NewHeatMap(matrixGrid(m), pal)
	hm.Min, hm.Max = lo, hi
	hm.NaN = nanColor
	// Clamp rather than leave out-of-range cells blank: with a fixed
	// range, values just outside it (rounding in a correlation) should
	// look like the extreme they exceed.
	hm.Underflow = colors[0]
	hm.Overflow = colors[len(colors)-1]
	// Rasterising keeps very large matrices from producing an SVG with
	// millions of rectangles; small ones stay vector for crisp edges.
	hm.Rasterized = n > 100

	p := newPlot(title, "", "")
	p.Add(noGlyphs{hm})
	// No padding, so that the cells fill the axes exactly.
	p.X.Padding, p.Y.Padding = 0, 0
	xticks, yticks := matrixTicks(labels)
	p.X.Tick.Marker = xticks
	p.Y.Tick.Marker = yticks
	if longestLabel(labels) > 3 {
		// Long labels would overlap horizontally; slant them.
		p.X.Tick.Label.Rotation = math.Pi / 4
		p.X.Tick.Label.XAlign = draw.XRight
		p.X.Tick.Label.YAlign = draw.YTop
	}
	if n <= maxAnnotated {
		p.Add(noGlyphs{cellLabels(m, cmap)})
	}

	cb := newPlot("", "", "")
	cb.Add(&plotter.ColorBar{ColorMap: cmap, Vertical: true})
	cb.HideX()
	cb.X.Padding, cb.Y.Padding = 0, 0

	return &Figure{width: heatmapWidth, height: heatmapHeight, draw: func(c draw.Canvas) {
		hc, bc := heatmapLayout(c, p, cb)
		p.Draw(hc)
		cb.Draw(bc)
	}}, nil
}

// Heatmap draws the figure of NewHeatmap and writes it to path (.png or
// .svg, by its extension).
func Heatmap(path, title string, m [][]float64, labels []string, lo, hi float64) error {
	return save(path, func() (*Figure, error) { return NewHeatmap(title, m, labels, lo, hi) })
}

// heatmapLayout splits c into a canvas for the heat map plot p, sized so
// that its data area is square, and a canvas for the colour bar plot cb
// to its right whose bar spans exactly the heat map's height.
func heatmapLayout(c draw.Canvas, p, cb *plot.Plot) (hc, bc draw.Canvas) {
	const (
		reserve  = 1.0 * vg.Inch // room kept for the colour bar and its labels
		gap      = 0.12 * vg.Inch
		barWidth = 0.22 * vg.Inch
	)
	hc = draw.Crop(c, 0, -reserve, 0, 0)
	da := p.DataCanvas(hc)
	switch d := da.Size().X - da.Size().Y; {
	case d > 0:
		hc = draw.Crop(hc, 0, -d, 0, 0)
	case d < 0:
		hc = draw.Crop(hc, 0, 0, -d/2, d/2)
	}
	da = p.DataCanvas(hc)

	bc = c
	bc.Min = vg.Point{X: da.Max.X + gap, Y: da.Min.Y}
	bc.Max = vg.Point{X: c.Max.X, Y: da.Max.Y}
	// The colour bar's tick labels sit left of the bar; measure them and
	// keep only barWidth of data area, then stretch the canvas vertically
	// so the bar itself lines up with the heat map.
	bd := cb.DataCanvas(bc)
	bc.Max.X = bd.Min.X + barWidth
	bc.Min.Y -= bd.Min.Y - da.Min.Y
	bc.Max.Y += da.Max.Y - bd.Max.Y

	// Centre the pair horizontally.
	shift := (c.Max.X - bc.Max.X) / 2
	if shift > 0 {
		hc.Min.X += shift
		hc.Max.X += shift
		bc.Min.X += shift
		bc.Max.X += shift
	}
	return hc, bc
}

// colorRange returns the colour scale range for m given the caller's lo
// and hi, which are either both NaN (use the data range) or a finite,
// increasing pair.
func colorRange(m [][]float64, lo, hi float64) (float64, float64, error) {
	switch {
	case math.IsNaN(lo) && math.IsNaN(hi):
		lo, hi = math.Inf(1), math.Inf(-1)
		for _, row := range m {
			for _, v := range row {
				if finite(v) {
					lo = math.Min(lo, v)
					hi = math.Max(hi, v)
				}
			}
		}
		if lo > hi {
			// No finite values: every cell is grey (or clamped), any
			// range will do.
			return 0, 1, nil
		}
		if lo == hi {
			// A constant matrix still needs a non-empty scale.
			d := math.Abs(lo) / 10
			if d == 0 {
				d = 0.5
			}
			lo, hi = lo-d, hi+d
		}
		return lo, hi, nil
	case math.IsNaN(lo) || math.IsNaN(hi):
		return 0, 0, fmt.Errorf("chart: heatmap: colour range [%g, %g]: lo and hi must both be NaN or both be set", lo, hi)
	case !finite(lo) || !finite(hi) || lo >= hi:
		return 0, 0, fmt.Errorf("chart: heatmap: invalid colour range [%g, %g]", lo, hi)
	}
	return lo, hi, nil
}

// matrixGrid adapts a square matrix to plotter.GridXYZ with row 0 at the
// top: grid row r is matrix row n-1-r.
type matrixGrid [][]float64

func (g matrixGrid) Dims() (c, r int)       { return len(g), len(g) }
func (g matrixGrid) Z(c, r int) float64     { return g[len(g)-1-r][c] }
func (g matrixGrid) X(c int) float64        { return float64(c) }
func (g matrixGrid) Y(r int) float64        { return float64(r) }
func (g matrixGrid) rowY(i int) float64     { return float64(len(g) - 1 - i) }
func (g matrixGrid) colX(j int) float64     { return float64(j) }
func (g matrixGrid) value(i, j int) float64 { return g[i][j] }

// matrixTicks returns tick markers naming the columns (x) and rows (y,
// top to bottom). Runs of equal consecutive labels (pixels ordered by
// cluster) are named once, at the middle of the run, with unlabelled
// ticks at the run boundaries; otherwise at most about maxTickLabels
// labels are shown per axis.
func matrixTicks(labels []string) (x, y plot.ConstantTicks) {
	n := len(labels)
	type run struct{ lo, hi int }
	var runs []run
	for i := 0; i < n; i++ {
		if len(runs) > 0 && labels[runs[len(runs)-1].lo] == labels[i] {
			runs[len(runs)-1].hi = i
			continue
		}
		runs = append(runs, run{i, i})
	}
	if len(runs) < n && len(runs) <= maxTickLabels {
		for k, r := range runs {
			mid := float64(r.lo+r.hi) / 2
			x = append(x, plot.Tick{Value: mid, Label: labels[r.lo]})
			y = append(y, plot.Tick{Value: float64(n-1) - mid, Label: labels[r.lo]})
			if k > 0 {
				b := float64(r.lo) - 0.5
				x = append(x, plot.Tick{Value: b})
				y = append(y, plot.Tick{Value: float64(n-1) - b})
			}
		}
		return x, y
	}
	step := (n + maxTickLabels - 1) / maxTickLabels
	for i := 0; i < n; i += step {
		x = append(x, plot.Tick{Value: float64(i), Label: labels[i]})
		y = append(y, plot.Tick{Value: float64(n - 1 - i), Label: labels[i]})
	}
	return x, y
}

func longestLabel(labels []string) int {
	var n int
	for _, l := range labels {
		n = max(n, len([]rune(l)))
	}
	return n
}

// cellLabels returns labels writing each value of m in its cell,
// in black or white depending on the lightness of the cell colour.
func cellLabels(m [][]float64, cmap palette.ColorMap) *plotter.Labels {
	g := matrixGrid(m)
	n := len(m)
	maxAbs := 0.0
	for _, row := range m {
		for _, v := range row {
			if finite(v) {
				maxAbs = math.Max(maxAbs, math.Abs(v))
			}
		}
	}
	size := vg.Points(10)
	if n > 8 {
		size = vg.Points(8)
	}
	l := &plotter.Labels{}
	for i := range n {
		for j := range n {
			v := g.value(i, j)
			var s string
			bg := cellColor(cmap, v)
			switch {
			case math.IsNaN(v):
				s, bg = "NaN", nanColor
			case math.IsInf(v, 0):
				s = strconv.FormatFloat(v, 'g', 3, 64)
			case maxAbs >= 10:
				s = strconv.FormatFloat(v, 'g', 3, 64)
			default:
				s = strconv.FormatFloat(v, 'f', 2, 64)
			}
			l.XYs = append(l.XYs, plotter.XY{X: g.colX(j), Y: g.rowY(i)})
			l.Labels = append(l.Labels, s)
			l.TextStyle = append(l.TextStyle, text.Style{
				Color:   textColorOn(bg),
				Font:    font.From(sans, size),
				XAlign:  draw.XCenter,
				YAlign:  draw.YCenter,
				Handler: plot.DefaultTextHandler,
			})
		}
	}
	return l
}

// cellColor is the colour cmap gives v, clamped to the map's range the
// same way the heat map clamps out-of-range cells.
func cellColor(cmap palette.ColorMap, v float64) color.Color {
	if math.IsNaN(v) {
		return nanColor
	}
	v = math.Max(cmap.Min(), math.Min(cmap.Max(), v))
	c, err := cmap.At(v)
	if err != nil {
		return color.White
	}
	return c
}

// textColorOn returns black or white, whichever contrasts more with bg.
func textColorOn(bg color.Color) color.Color {
	r, g, b, _ := bg.RGBA()
	// Rec. 709 luma on gamma-encoded values is a good enough proxy for
	// perceived lightness here.
	y := (0.2126*float64(r) + 0.7152*float64(g) + 0.0722*float64(b)) / 0xffff
	if y < 0.5 {
		return color.White
	}
	return color.Black
}

// noGlyphs hides a plotter's glyph boxes from the plot. HeatMap reports a
// box for every cell, which for large matrices makes layout quadratic
// and pads the axes away from the cells; the cells never need padding
// because they lie inside the data range.
type noGlyphs struct {
	p interface {
		plot.Plotter
		plot.DataRanger
	}
}

func (g noGlyphs) Plot(c draw.Canvas, p *plot.Plot) { g.p.Plot(c, p) }
func (g noGlyphs) DataRange() (xmin, xmax, ymin, ymax float64) {
	return g.p.DataRange()
}

// maxHeatmapLabel is the longest row or column name a heatmap draws, in
// runes; longer names lose their middle.
const maxHeatmapLabel = 28
