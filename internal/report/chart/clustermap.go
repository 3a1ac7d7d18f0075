package chart

import (
	"fmt"
	"image/color"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// clusterColors are the series colours, so that when a chart lists the
// clusters first, cluster c has the same colour there as in the map (for
// up to 8 clusters; the series colours then repeat). Okabe–Ito's yellow
// and a wine follow; beyond them hues are spread evenly.
var clusterColors = append(slices.Clone(seriesColors),
	color.NRGBA{0xf0, 0xe4, 0x42, 0xff}, // yellow
	color.NRGBA{0x88, 0x22, 0x55, 0xff}, // wine
)

// ClusterColor returns the colour of cluster c in a cluster map.
func ClusterColor(c int) color.NRGBA {
	if c < len(clusterColors) {
		return clusterColors[c]
	}
	// Golden-angle hues, medium lightness.
	h := math.Mod(float64(c)*137.508, 360) / 60
	x := 1 - math.Abs(math.Mod(h, 2)-1)
	var r, g, b float64
	switch int(h) {
	case 0:
		r, g = 1, x
	case 1:
		r, g = x, 1
	case 2:
		g, b = 1, x
	case 3:
		g, b = x, 1
	case 4:
		r, b = x, 1
	default:
		r, b = 1, x
	}
	return color.NRGBA{uint8(40 + 170*r), uint8(40 + 170*g), uint8(40 + 170*b), 0xff}
}

// NewClusterMap draws the cluster of every pixel of an h×w grid (labels
// in row-major order, 0..k-1) as a map with one colour per cluster
// (ClusterColor) and a legend naming each cluster with its size. Each
// pixel is a square cell, so a 28x28 map is as readable as a 64x64 one.
func NewClusterMap(title string, labels []int, h, w int) (*Figure, error) {
	if h < 1 || w < 1 || len(labels) != h*w {
		return nil, fmt.Errorf("chart: cluster map: %d labels for a %dx%d grid", len(labels), h, w)
	}
	k := 0
	for _, c := range labels {
		if c < 0 {
			return nil, fmt.Errorf("chart: cluster map: negative label %d", c)
		}
		k = max(k, c+1)
	}
	sizes := make([]int, k)
	for _, c := range labels {
		sizes[c]++
	}

	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font = font.From(sans, 13)
	p.HideAxes()
	p.X.Min, p.X.Max = 0, float64(w)
	p.Y.Min, p.Y.Max = 0, float64(h)
	p.Add(cells{labels: labels, h: h, w: w})

	leg := plot.NewLegend()
	leg.TextStyle.Font = font.From(sans, 10)
	leg.Top, leg.Left = true, true
	leg.Padding = vg.Points(4)
	for c := 0; c < k; c++ {
		leg.Add(fmt.Sprintf("cluster %d (%d px)", c, sizes[c]), swatch(ClusterColor(c)))
	}

	const side = 5 * vg.Inch
	legendWidth := 1.6 * vg.Inch
	return &Figure{width: side + legendWidth, height: side, draw: func(dc draw.Canvas) {
		mapCanvas := draw.Crop(dc, 0, -legendWidth, 0, 0)
		// Square cells: shrink the map area to the grid's aspect ratio.
		da := p.DataCanvas(mapCanvas)
		cell := min(da.Size().X/vg.Length(w), da.Size().Y/vg.Length(h))
		mapCanvas = draw.Crop(mapCanvas, 0, -(da.Size().X - cell*vg.Length(w)), 0, -(da.Size().Y - cell*vg.Length(h)))
		p.Draw(mapCanvas)
		legCanvas := draw.Crop(dc, side, 0, 0, -0.3*vg.Inch)
		leg.Draw(legCanvas)
	}}, nil
}

// ClusterMap draws the figure of NewClusterMap and writes it to path
// (.png or .svg, by its extension).
func ClusterMap(path, title string, labels []int, h, w int) error {
	return save(path, func() (*Figure, error) { return NewClusterMap(title, labels, h, w) })
}

// cells draws the label grid, row 0 at the top.
type cells struct {
	labels []int
	h, w   int
}

func (g cells) Plot(c draw.Canvas, p *plot.Plot) {
	tx, ty := p.Transforms(&c)
	for y := 0; y < g.h; y++ {
		for x := 0; x < g.w; x++ {
			// One extra hairline of overlap hides anti-aliasing seams.
			x0, x1 := tx(float64(x)), tx(float64(x+1))+0.3
			y0, y1 := ty(float64(g.h-y-1)), ty(float64(g.h-y))+0.3
			c.SetColor(ClusterColor(g.labels[y*g.w+x]))
			c.Fill(vg.Path{
				{Type: vg.MoveComp, Pos: vg.Point{X: x0, Y: y0}},
				{Type: vg.LineComp, Pos: vg.Point{X: x1, Y: y0}},
				{Type: vg.LineComp, Pos: vg.Point{X: x1, Y: y1}},
				{Type: vg.LineComp, Pos: vg.Point{X: x0, Y: y1}},
				{Type: vg.CloseComp},
			})
		}
	}
}

// swatch is a legend thumbnail filled with one colour.
type swatch color.NRGBA

func (s swatch) Thumbnail(c *draw.Canvas) {
	pts := []vg.Point{{X: c.Min.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Max.Y}, {X: c.Min.X, Y: c.Max.Y}}
	c.FillPolygon(color.NRGBA(s), pts)
}

var _ plot.Plotter = cells{}
