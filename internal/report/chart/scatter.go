package chart

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// NewScatter draws point clouds, one per series (Lower and Upper are
// ignored). With identity set,
// the dashed line y = x is drawn for reference, as in a calibration plot
// of an estimate against the truth, and both axes span the union of the
// data ranges so that the line is the diagonal.
func NewScatter(title, xlabel, ylabel string, series []Series, identity bool) (*Figure, error) {
	if len(series) == 0 {
		return nil, fmt.Errorf("chart: scatter: no series")
	}
	p := newPlot(title, xlabel, ylabel)
	grid := plotter.NewGrid()
	grid.Vertical.Color, grid.Horizontal.Color = color.Gray{Y: 0xe0}, color.Gray{Y: 0xe0}
	p.Add(grid)
	lo, hi := 0.0, 0.0
	first := true
	for i, s := range series {
		if len(s.X) != len(s.Y) || len(s.X) == 0 {
			return nil, fmt.Errorf("chart: scatter series %d (%q): %d x values, %d y values", i, s.Name, len(s.X), len(s.Y))
		}
		xys := make(plotter.XYs, len(s.X))
		for j := range xys {
			if !finite(s.X[j]) || !finite(s.Y[j]) {
				return nil, fmt.Errorf("chart: scatter series %d (%q): point %d is not finite", i, s.Name, j)
			}
			xys[j] = plotter.XY{X: s.X[j], Y: s.Y[j]}
			for _, v := range []float64{s.X[j], s.Y[j]} {
				if first || v < lo {
					lo = v
				}
				if first || v > hi {
					hi = v
				}
				first = false
			}
		}
		sc, err := plotter.NewScatter(xys)
		if err != nil {
			return nil, fmt.Errorf("chart: %w", err)
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: seriesColor(i, 0xb0), Radius: vg.Points(1.8), Shape: draw.CircleGlyph{}}
		p.Add(sc)
		if s.Name != "" {
			p.Legend.Add(s.Name, sc)
		}
	}
	if identity {
		if hi == lo {
			hi = lo + 1
		}
		diag, err := plotter.NewLine(plotter.XYs{{X: lo, Y: lo}, {X: hi, Y: hi}})
		if err != nil {
			return nil, fmt.Errorf("chart: %w", err)
		}
		diag.Color = color.Gray{Y: 0x66}
		diag.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(diag)
		p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = lo, hi, lo, hi
	}
	p.Legend.Top, p.Legend.Left = true, true
	return &Figure{width: 5 * vg.Inch, height: 5 * vg.Inch, draw: p.Draw}, nil
}

// Scatter draws the figure of NewScatter and writes it to path (.png or
// .svg, by its extension).
func Scatter(path, title, xlabel, ylabel string, series []Series, identity bool) error {
	return save(path, func() (*Figure, error) { return NewScatter(title, xlabel, ylabel, series, identity) })
}
