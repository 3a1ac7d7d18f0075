package chart

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// NewHistograms draws one histogram per group, overlaid and
// semi-transparent. All groups share the same bins
// bins equal-width bins spanning the range of all values, so that their
// shapes can be compared bin by bin. Groups are drawn and listed in the
// legend in sorted name order, with their sizes, so that the output does
// not depend on map iteration order.
//
// Each histogram is normalised to unit area (the y axis is a density),
// because the groups being compared, such as correct and incorrect
// answers, usually differ greatly in size. An empty group appears in the
// legend only.
//
// NewHistograms returns an error if bins < 1, if there are no values at all,
// or if any value is NaN or infinite.
func NewHistograms(title, xlabel string, groups map[string][]float64, bins int) (*Figure, error) {
	if bins < 1 {
		return nil, fmt.Errorf("chart: histograms: %d bins", bins)
	}
	names := make([]string, 0, len(groups))
	lo, hi := math.Inf(1), math.Inf(-1)
	for name, vs := range groups {
		names = append(names, name)
		for _, v := range vs {
			if !finite(v) {
				return nil, fmt.Errorf("chart: histograms: group %q: non-finite value %g", name, v)
			}
			lo = math.Min(lo, v)
			hi = math.Max(hi, v)
		}
	}
	if lo > hi {
		return nil, fmt.Errorf("chart: histograms: no values")
	}
	if lo == hi {
		// All values equal: give the single spike some width.
		lo, hi = lo-0.5, hi+0.5
	}
	slices.Sort(names)

	width := (hi - lo) / float64(bins)
	p := newPlot(title, xlabel, "density")
	for gi, name := range names {
		vs := groups[name]
		h := &plotter.Histogram{
			Width:     width,
			FillColor: seriesColor(gi, 0x70),
			LineStyle: draw.LineStyle{Color: seriesColor(gi, 0xff), Width: vg.Points(0.75)},
		}
		if len(vs) > 0 {
			h.Bins = make([]plotter.HistogramBin, bins)
			for k := range h.Bins {
				h.Bins[k].Min = lo + float64(k)*width
				h.Bins[k].Max = lo + float64(k+1)*width
			}
			h.Bins[bins-1].Max = hi // avoid rounding short of hi
			w := 1 / (float64(len(vs)) * width)
			for _, v := range vs {
				// The top edge belongs to the last bin.
				k := min(int((v-lo)/width), bins-1)
				h.Bins[k].Weight += w
			}
			p.Add(h)
		}
		p.Legend.Add(fmt.Sprintf("%s (n=%d)", name, len(vs)), h)
	}
	return &Figure{width: chartWidth, height: chartHeight, draw: sideLegend(p)}, nil
}

// Histograms draws the figure of NewHistograms and writes it to path (.png or
// .svg, by its extension).
func Histograms(path, title, xlabel string, groups map[string][]float64, bins int) error {
	return save(path, func() (*Figure, error) { return NewHistograms(title, xlabel, groups, bins) })
}
