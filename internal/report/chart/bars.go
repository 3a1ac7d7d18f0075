package chart

import (
	"fmt"
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// NewBars draws one bar per label, for example the bias, variance and
// noise terms of a decomposition.
// Each bar is annotated with its value. If errs is not nil, errs[i] is
// drawn as a symmetric error bar ±errs[i] on bar i. Negative values are
// drawn as bars below zero.
//
// NewBars returns an error if labels is empty, if values or a non-nil errs
// differ in length from labels, or if any value or error is not finite or
// an error is negative.
func NewBars(title, ylabel string, labels []string, values, errs []float64) (*Figure, error) {
	n := len(labels)
	if n == 0 {
		return nil, fmt.Errorf("chart: bars: no bars")
	}
	if len(values) != n {
		return nil, fmt.Errorf("chart: bars: %d labels but %d values", n, len(values))
	}
	if errs != nil && len(errs) != n {
		return nil, fmt.Errorf("chart: bars: %d labels but %d errors", n, len(errs))
	}
	for i, v := range values {
		if !finite(v) {
			return nil, fmt.Errorf("chart: bars: %q: non-finite value %g", labels[i], v)
		}
		if errs != nil && (!finite(errs[i]) || errs[i] < 0) {
			return nil, fmt.Errorf("chart: bars: %q: invalid error %g", labels[i], errs[i])
		}
	}

	p := newPlot(title, "", ylabel)
	grid := plotter.NewGrid()
	grid.Vertical.Width = 0
	grid.Horizontal.Color = seriesColor(7, 0x50)
	p.Add(grid)

	// Bars take 60% of their slot, capped so that two or three bars do
	// not turn into slabs.
	width := min(vg.Points(48), 0.6*(chartWidth-vg.Inch)/vg.Length(n))
	bc, err := plotter.NewBarChart(plotter.Values(values), width)
	if err != nil {
		return nil, fmt.Errorf("chart: bars: %w", err)
	}
	bc.Color = seriesColor(0, 0xc0)
	bc.LineStyle = draw.LineStyle{Color: seriesColor(0, 0xff), Width: vg.Points(0.75)}
	p.Add(bc)

	// Value labels sit just beyond the end of the bar (or its error
	// bar): above for positive values, below for negative ones. Labels
	// share one offset, hence two plotters.
	above := &plotter.Labels{Offset: vg.Point{Y: vg.Points(3)}}
	below := &plotter.Labels{Offset: vg.Point{Y: -vg.Points(3)}}
	for i, v := range values {
		l, end, align := above, v, draw.YBottom
		if v < 0 {
			l, align = below, draw.YTop
		}
		if errs != nil {
			if v < 0 {
				end -= errs[i]
			} else {
				end += errs[i]
			}
		}
		l.XYs = append(l.XYs, plotter.XY{X: float64(i), Y: end})
		l.Labels = append(l.Labels, strconv.FormatFloat(v, 'g', 3, 64))
		l.TextStyle = append(l.TextStyle, text.Style{
			Color:   color.Black,
			Font:    font.From(sans, 9),
			XAlign:  draw.XCenter,
			YAlign:  align,
			Handler: plot.DefaultTextHandler,
		})
	}

	if errs != nil {
		eb, err := plotter.NewYErrorBars(barErrors(values, errs))
		if err != nil {
			return nil, fmt.Errorf("chart: bars: %w", err)
		}
		eb.LineStyle.Width = vg.Points(1)
		p.Add(eb)
	}
	p.Add(above, below)
	// Long set names (checkpoint paths, run ids) would overlap each
	// other and squeeze the bars: they are shortened in the middle,
	// where such names differ least, and slanted when they still do not
	// fit under their bars.
	short := make([]string, n)
	longest := 0
	for i, l := range labels {
		short[i] = middleEllipsis(l, maxBarLabel)
		longest = max(longest, len([]rune(short[i])))
	}
	p.NominalX(short...)
	// Half a slot of margin on either side, as between bars.
	p.X.Min, p.X.Max = -0.5, float64(n)-0.5
	p.X.Tick.Label.Font = font.From(sans, 11)
	if longest*n > slantAbove {
		p.X.Tick.Label.Rotation = math.Pi / 4
		p.X.Tick.Label.XAlign = draw.XRight
		p.X.Tick.Label.YAlign = draw.YTop
	}
	return &Figure{width: chartWidth, height: chartHeight, draw: func(c draw.Canvas) {
		p.Draw(draw.Crop(c, 0, -rightMargin, 0, 0))
	}}, nil
}

// Bars draws the figure of NewBars and writes it to path (.png or
// .svg, by its extension).
func Bars(path, title, ylabel string, labels []string, values, errs []float64) error {
	return save(path, func() (*Figure, error) { return NewBars(title, ylabel, labels, values, errs) })
}

// maxBarLabel bounds a bar label, in characters; slantAbove is the total
// of label characters past which labels no longer fit side by side.
const (
	maxBarLabel = 22
	slantAbove  = 56
)

// middleEllipsis shortens s to at most max runes by cutting its middle:
// "ddpm_cifar10_epoch_0100_samples" keeps its start and its end, which
// is where run names differ.
func middleEllipsis(s string, max int) string {
	r := []rune(s)
	if len(r) <= max {
		return s
	}
	head := (max - 1) / 2
	tail := max - 1 - head
	return string(r[:head]) + "…" + string(r[len(r)-tail:])
}

// yErrs adapts bar values and symmetric errors to the XYer and YErrorer
// interfaces wanted by plotter.NewYErrorBars.
type yErrs struct {
	plotter.XYs
	plotter.YErrors
}

func barErrors(values, errs []float64) yErrs {
	e := yErrs{
		XYs:     make(plotter.XYs, len(values)),
		YErrors: make(plotter.YErrors, len(values)),
	}
	for i, v := range values {
		e.XYs[i] = plotter.XY{X: float64(i), Y: v}
		e.YErrors[i].Low, e.YErrors[i].High = errs[i], errs[i]
	}
	return e
}
