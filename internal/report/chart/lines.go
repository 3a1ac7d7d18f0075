package chart

import (
	"fmt"
	"image/color"
	"math"
	"strconv"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Series is one line in a line chart or one curve in an ROC chart.
type Series struct {
	// Name labels the series in the legend; an empty Name leaves the
	// series out of the legend.
	Name string

	// X and Y are the coordinates of the points, in drawing order.
	// They must have the same, non-zero length and be finite.
	X, Y []float64

	// Lower and Upper, if not nil, bound a shaded band drawn behind the
	// line, for example mean ± one standard deviation. Both must be given
	// together and have the same length as X. The band is drawn as a
	// polygon, so X should be sorted.
	Lower, Upper []float64
}

// markerLimit is the longest series drawn with point markers; longer
// series are drawn as plain lines, where markers would just thicken them.
const markerLimit = 30

// NewLines draws a line chart of series with a legend. Each series gets a distinct colour and, when it has
// Lower and Upper bounds, a translucent band in the same colour.
func NewLines(title, xlabel, ylabel string, series []Series) (*Figure, error) {
	p := newPlot(title, xlabel, ylabel)
	if err := addSeries(p, series); err != nil {
		return nil, err
	}
	if integral(series) {
		p.X.Tick.Marker = integerTicks{}
	}
	return &Figure{width: chartWidth, height: chartHeight, draw: sideLegend(p)}, nil
}

// NewTimeLines is NewLines with a time x axis: every X is a Unix time in
// seconds, and the ticks are labelled with layout (a time.Format layout)
// in the location loc (UTC when nil).
func NewTimeLines(title, xlabel, ylabel string, series []Series, loc *time.Location, layout string) (*Figure, error) {
	p := newPlot(title, xlabel, ylabel)
	if err := addSeries(p, series); err != nil {
		return nil, err
	}
	if loc == nil {
		loc = time.UTC
	}
	p.X.Tick.Marker = plot.TimeTicks{Format: layout, Time: plot.UnixTimeIn(loc)}
	return &Figure{width: chartWidth, height: chartHeight, draw: sideLegend(p)}, nil
}

// Lines draws the figure of NewLines and writes it to path (.png or
// .svg, by its extension).
func Lines(path, title, xlabel, ylabel string, series []Series) error {
	return save(path, func() (*Figure, error) { return NewLines(title, xlabel, ylabel, series) })
}

// NewLinesLog2 is NewLines with a base-2 logarithmic x axis, for quantities that
// double from point to point (context sizes n = 1, 2, 4, ...): ticks sit
// at powers of two and are labelled with the values themselves. Every X
// must be positive.
func NewLinesLog2(title, xlabel, ylabel string, series []Series) (*Figure, error) {
	for i, s := range series {
		for _, v := range s.X {
			if !(v > 0) {
				return nil, fmt.Errorf("chart: series %d (%q): x %g on a log axis: want > 0", i, s.Name, v)
			}
		}
	}
	p := newPlot(title, xlabel, ylabel)
	if err := addSeries(p, series); err != nil {
		return nil, err
	}
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = pow2Ticks{}
	return &Figure{width: chartWidth, height: chartHeight, draw: sideLegend(p)}, nil
}

// LinesLog2 draws the figure of NewLinesLog2 and writes it to path (.png or
// .svg, by its extension).
func LinesLog2(path, title, xlabel, ylabel string, series []Series) error {
	return save(path, func() (*Figure, error) { return NewLinesLog2(title, xlabel, ylabel, series) })
}

// integral reports whether every x of every series is a whole number
// (steps, epochs, days), which integerTicks labels without decimals.
func integral(series []Series) bool {
	for _, s := range series {
		for _, v := range s.X {
			if v != math.Trunc(v) || math.Abs(v) > 1<<52 {
				return false
			}
		}
	}
	return true
}

// integerTicks puts major ticks at whole numbers 1, 2 or 5 times a power
// of ten apart (about five labels) and labels them without decimals:
// "day 2.50" means nothing.
type integerTicks struct{}

func (integerTicks) Ticks(lo, hi float64) []plot.Tick {
	span := hi - lo
	if !(span > 0) {
		return []plot.Tick{{Value: lo, Label: strconv.FormatFloat(math.Round(lo), 'f', 0, 64)}}
	}
	// The smallest of 1, 2, 5, 10, 20, 50, ... giving at most six steps.
	step := 1.0
	for k := 0; span/step > 6; k++ {
		step = []float64{1, 2, 5}[(k+1)%3] * math.Pow(10, float64((k+1)/3))
	}
	var ticks []plot.Tick
	for v := math.Ceil(lo/step) * step; v <= hi; v += step {
		ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', 0, 64)})
	}
	return ticks
}

// pow2Ticks puts major ticks at the powers of two in range, thinned to
// at most eight labels, and unlabelled ticks at the skipped powers.
type pow2Ticks struct{}

func (pow2Ticks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi >= lo) {
		return nil
	}
	first, last := math.Ceil(math.Log2(lo)-1e-9), math.Floor(math.Log2(hi)+1e-9)
	every := 1.0
	for (last-first)/every+1 > 8 {
		every *= 2
	}
	var ticks []plot.Tick
	for e := first; e <= last; e++ {
		v := math.Exp2(e)
		t := plot.Tick{Value: v}
		if math.Mod(e-first, every) == 0 {
			t.Label = strconv.FormatFloat(v, 'g', -1, 64)
		}
		ticks = append(ticks, t)
	}
	return ticks
}

// NewROC draws receiver operating characteristic curves. Each curve's X holds false-positive rates and Y
// true-positive rates, both in [0, 1]. The chance diagonal is drawn for
// reference. NewROC does not compute the area under the curve; callers put
// it in the series name, e.g. "kernel entropy (AUC 0.81)".
func NewROC(title string, curves []Series) (*Figure, error) {
	for i, c := range curves {
		for _, s := range [][]float64{c.X, c.Y, c.Lower, c.Upper} {
			for _, v := range s {
				// NaN fails both comparisons and is rejected too.
				if !(v >= 0 && v <= 1) {
					return nil, fmt.Errorf("chart: ROC curve %d (%q): rate %g outside [0, 1]", i, c.Name, v)
				}
			}
		}
	}
	p := newPlot(title, "false positive rate", "true positive rate")
	p.X.Min, p.X.Max = 0, 1
	p.Y.Min, p.Y.Max = 0, 1

	diag, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 1}})
	if err != nil {
		return nil, fmt.Errorf("chart: %w", err)
	}
	diag.Color = color.Gray{Y: 0x99}
	diag.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	p.Add(diag)

	if err := addSeries(p, curves); err != nil {
		return nil, err
	}
	// Curves hug the top-left corner, so the bottom right is free.
	p.Legend.Top = false
	p.Legend.XOffs = -vg.Points(4)
	p.Legend.YOffs = vg.Points(4)
	return &Figure{width: chartWidth, height: 4.5 * vg.Inch, draw: p.Draw}, nil
}

// ROC draws the figure of NewROC and writes it to path (.png or
// .svg, by its extension).
func ROC(path, title string, curves []Series) error {
	return save(path, func() (*Figure, error) { return NewROC(title, curves) })
}

// addSeries validates series and adds them to p with a grid, bands
// behind lines, and legend entries.
func addSeries(p *plot.Plot, series []Series) error {
	if len(series) == 0 {
		return fmt.Errorf("chart: no series")
	}
	for i, s := range series {
		if err := checkSeries(s); err != nil {
			return fmt.Errorf("chart: series %d (%q): %w", i, s.Name, err)
		}
	}

	grid := plotter.NewGrid()
	grid.Vertical.Color = color.Gray{Y: 0xe0}
	grid.Horizontal.Color = color.Gray{Y: 0xe0}
	p.Add(grid)

	// Bands first so that no band hides another series' line.
	for i, s := range series {
		if s.Lower == nil {
			continue
		}
		ring := make(plotter.XYs, 0, 2*len(s.X))
		for k := range s.X {
			ring = append(ring, plotter.XY{X: s.X[k], Y: s.Upper[k]})
		}
		for k := len(s.X) - 1; k >= 0; k-- {
			ring = append(ring, plotter.XY{X: s.X[k], Y: s.Lower[k]})
		}
		band, err := plotter.NewPolygon(ring)
		if err != nil {
			return fmt.Errorf("chart: series %d (%q): band: %w", i, s.Name, err)
		}
		band.Color = seriesColor(i, 0x40)
		band.LineStyle = draw.LineStyle{Color: color.Transparent}
		p.Add(band)
	}

	for i, s := range series {
		xys := make(plotter.XYs, len(s.X))
		for k := range xys {
			xys[k] = plotter.XY{X: s.X[k], Y: s.Y[k]}
		}
		line, err := plotter.NewLine(xys)
		if err != nil {
			return fmt.Errorf("chart: series %d (%q): %w", i, s.Name, err)
		}
		line.Color = seriesColor(i, 0xff)
		line.Width = vg.Points(1.5)
		p.Add(line)
		thumbs := []plot.Thumbnailer{line}
		if len(xys) <= markerLimit {
			pts, err := plotter.NewScatter(xys)
			if err != nil {
				return fmt.Errorf("chart: series %d (%q): %w", i, s.Name, err)
			}
			pts.Color = line.Color
			pts.Shape = draw.CircleGlyph{}
			pts.Radius = vg.Points(2)
			p.Add(pts)
			thumbs = append(thumbs, pts)
		}
		if s.Name != "" {
			// The legend sits below the plot, as wide as the canvas
			// left of the data area allows: about 60 characters.
			p.Legend.Add(middleEllipsis(s.Name, 60), thumbs...)
		}
	}
	return nil
}

// checkSeries reports whether s has consistent lengths and finite values.
func checkSeries(s Series) error {
	n := len(s.X)
	if n == 0 {
		return fmt.Errorf("no points")
	}
	if len(s.Y) != n {
		return fmt.Errorf("len(X)=%d but len(Y)=%d", n, len(s.Y))
	}
	if (s.Lower == nil) != (s.Upper == nil) {
		return fmt.Errorf("band needs both Lower and Upper")
	}
	if s.Lower != nil && (len(s.Lower) != n || len(s.Upper) != n) {
		return fmt.Errorf("len(X)=%d but len(Lower)=%d, len(Upper)=%d", n, len(s.Lower), len(s.Upper))
	}
	for _, vs := range [][]float64{s.X, s.Y, s.Lower, s.Upper} {
		for _, v := range vs {
			if !finite(v) {
				return fmt.Errorf("non-finite value %g", v)
			}
		}
	}
	return nil
}

// rightMargin keeps the last point's marker and tick label inside the
// canvas: gonum/plot puts the data area's right edge on the canvas edge.
const rightMargin = 10 // points

// sideLegend moves p's legend into a strip below the plot, left-aligned
// with the data area, and returns the function drawing both. A legend
// inside the axes of a line chart or histogram almost always covers data,
// and a strip beside the plot steals width that long series names make
// unbounded; below the plot the entries stack and only cost height.
func sideLegend(p *plot.Plot) func(c draw.Canvas) {
	const gap = 6 // points between the plot and the legend
	leg := p.Legend
	leg.Top, leg.Left = true, true
	p.Legend = plot.NewLegend()
	return func(c draw.Canvas) {
		h := leg.Rectangle(c).Size().Y
		if h == 0 { // no named entries
			p.Draw(draw.Crop(c, 0, -rightMargin, 0, 0))
			return
		}
		pc := draw.Crop(c, 0, -rightMargin, h+2*gap, 0)
		p.Draw(pc)
		da := p.DataCanvas(pc)
		lc := c
		lc.Min = vg.Point{X: da.Min.X, Y: c.Min.Y + gap/2}
		lc.Max = vg.Point{X: c.Max.X, Y: c.Min.Y + gap/2 + h}
		leg.Draw(lc)
	}
}
