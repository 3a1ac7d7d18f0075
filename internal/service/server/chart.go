package server

import (
	"fmt"
	"html/template"
	"math"
	"strconv"
	"strings"

	"github.com/genlens/genlens/internal/service/monitorsvc"
)

// chunkChart draws a monitor's chunks as an SVG line chart, rendered on
// the server so that the dashboard needs no JavaScript: the estimated MSE
// per chunk with its ±3 sampling-error band, the realised MSE where
// labels have arrived, the reference thresholds, and alerting chunks in
// red. An incomplete last chunk is drawn hollow.
func chunkChart(v *monitorsvc.View, width, height int, title string) template.HTML {
	const left, right, top, bottom = 64, 40, 28, 40
	pw, ph := float64(width-left-right), float64(height-top-bottom)
	var b strings.Builder
	n := len(v.Chunks)
	if n == 0 {
		height = 60 // a line of text, not an empty plot
	}
	fmt.Fprintf(&b, `<svg class="chart" role="img" viewBox="0 0 %d %d" width="%d" height="%d" xmlns="http://www.w3.org/2000/svg">`, width, height, width, height)
	fmt.Fprintf(&b, `<title>%s</title>`, template.HTMLEscapeString(title))
	if n == 0 {
		fmt.Fprintf(&b, `<text x="%d" y="%d" class="empty" text-anchor="middle">no rows yet</text></svg>`, width/2, height/2)
		return template.HTML(b.String())
	}

	// The y range covers bands, realised values and thresholds.
	lo, hi := math.Inf(1), math.Inf(-1)
	see := func(x float64) {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			lo, hi = math.Min(lo, x), math.Max(hi, x)
		}
	}
	for _, c := range v.Chunks {
		see(c.Estimate)
		see(c.Realized)
	}
	see(v.Th.Lower)
	see(v.Th.Upper)
	// Bands of small chunks can be many times wider than the values; they
	// may stretch the axis by half again, and are cut at its top beyond,
	// so that the estimates and thresholds stay readable.
	if !math.IsInf(hi, -1) {
		top := hi + 0.5*(hi-math.Min(lo, 0))
		for _, c := range v.Chunks {
			see(math.Min(c.EstimateUpper, top))
		}
	}
	lo = math.Min(lo, 0) // MSE: start the axis at 0
	if math.IsInf(hi, -1) || hi <= lo {
		hi = lo + 1
	}
	ticks := niceTicks(lo, hi, 5)
	lo, hi = math.Min(lo, ticks[0]), math.Max(hi, ticks[len(ticks)-1])
	x := func(i int) float64 {
		if n == 1 {
			return left + pw/2
		}
		return left + pw*float64(i)/float64(n-1)
	}
	y := func(val float64) float64 { return top + ph*(1-(math.Min(math.Max(val, lo), hi)-lo)/(hi-lo)) }
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

	// Grid and y axis.
	for _, tk := range ticks {
		fmt.Fprintf(&b, `<line class="grid" x1="%d" x2="%s" y1="%s" y2="%s"/>`, left, f(left+pw), f(y(tk)), f(y(tk)))
		fmt.Fprintf(&b, `<text class="tick" x="%d" y="%s" text-anchor="end" dominant-baseline="middle">%s</text>`, left-6, f(y(tk)), formatTick(tk))
	}
	fmt.Fprintf(&b, `<text class="axis" x="14" y="%s" transform="rotate(-90 14 %s)" text-anchor="middle">MSE</text>`, f(top+ph/2), f(top+ph/2))
	// x ticks: at most about 10 chunk labels.
	step := max(1, (n+9)/10)
	for i := 0; i < n; i += step {
		label := strconv.Itoa(v.Chunks[i].Index)
		if p := v.Chunks[i].Period; p != "" {
			label = p
		}
		fmt.Fprintf(&b, `<text class="tick" x="%s" y="%d" text-anchor="middle">%s</text>`, f(x(i)), height-bottom+16, template.HTMLEscapeString(label))
	}
	fmt.Fprintf(&b, `<text class="axis" x="%s" y="%d" text-anchor="middle">chunk</text>`, f(left+pw/2), height-6)

	// Band: the interval of each chunk's MSE (the sampling band for a
	// model fitted before intervals were calibrated).
	var up, down []string
	for i, c := range v.Chunks {
		if !math.IsNaN(c.EstimateLower) && !math.IsNaN(c.EstimateUpper) {
			up = append(up, f(x(i))+","+f(y(c.EstimateUpper)))
			down = append([]string{f(x(i)) + "," + f(y(c.EstimateLower))}, down...)
		}
	}
	if len(up) > 1 {
		fmt.Fprintf(&b, `<polygon class="band" points="%s"/>`, strings.Join(append(up, down...), " "))
	}
	// Thresholds.
	if v.Th.Available() {
		for _, th := range []float64{v.Th.Lower, v.Th.Upper} {
			fmt.Fprintf(&b, `<line class="threshold" x1="%d" x2="%s" y1="%s" y2="%s"/>`, left, f(left+pw), f(y(th)), f(y(th)))
		}
	}
	// Realised MSE: a dashed line through labelled chunks.
	var real []string
	for i, c := range v.Chunks {
		if !math.IsNaN(c.Realized) {
			real = append(real, f(x(i))+","+f(y(c.Realized)))
		}
	}
	if len(real) > 1 {
		fmt.Fprintf(&b, `<polyline class="realized" points="%s"/>`, strings.Join(real, " "))
	}
	for i, c := range v.Chunks {
		if !math.IsNaN(c.Realized) {
			fmt.Fprintf(&b, `<rect class="realized-pt" x="%s" y="%s" width="6" height="6"><title>chunk %d: realised MSE %s (%d labelled)</title></rect>`,
				f(x(i)-3), f(y(c.Realized)-3), c.Index, formatNum(c.Realized), c.Labelled)
		}
	}
	// Estimate.
	var est []string
	for i, c := range v.Chunks {
		est = append(est, f(x(i))+","+f(y(c.Estimate)))
	}
	if len(est) > 1 {
		fmt.Fprintf(&b, `<polyline class="estimate" points="%s"/>`, strings.Join(est, " "))
	}
	for i, c := range v.Chunks {
		if c.Drift != nil && c.Drift.Extrapolating {
			// An extrapolation: the check model has seen no data there.
			cls := "extrap"
			if c.Drift.ThinSupport > c.Drift.ThinLimit {
				cls += " thin" // in thin support of the reference: a dotted ring
			}
			fmt.Fprintf(&b, `<circle class="%s" cx="%s" cy="%s" r="8"><title>chunk %d: extrapolating, %s</title></circle>`,
				cls, f(x(i)), f(y(c.Estimate)), c.Index, template.HTMLEscapeString(c.Drift.Why(v.Drift, c.Rows())))
		}
	}
	for i, c := range v.Chunks {
		cls := "pt"
		if c.Alert {
			cls += " alert"
		}
		if !v.Complete[i] {
			cls += " incomplete"
		}
		fmt.Fprintf(&b, `<circle class="%s" cx="%s" cy="%s" r="4"><title>chunk %d (%d rows%s): estimated MSE %s [%s, %s]%s</title></circle>`,
			cls, f(x(i)), f(y(c.Estimate)), c.Index, c.Rows(), map[bool]string{true: "", false: ", incomplete"}[v.Complete[i]],
			formatNum(c.Estimate), formatNum(c.EstimateLower), formatNum(c.EstimateUpper), map[bool]string{true: ", ALERT", false: ""}[c.Alert])
	}
	// Legend, from the left edge: the six entries of a monitor with a
	// drift model fit in a card's 560 px (11 px labels, about 6 px a
	// character).
	lx := 8
	b.WriteString(`<g class="key">`)
	legend := []struct{ cls, label string }{{"estimate", "estimated MSE"}, {"band", "interval"}, {"realized", "realised MSE"}, {"threshold", "thresholds"}, {"alert", "alert"}}
	if v.Drift != nil {
		legend = append(legend, struct{ cls, label string }{"extrap", "extrapolating"})
	}
	for _, l := range legend {
		switch l.cls {
		case "extrap":
			fmt.Fprintf(&b, `<circle class="extrap" cx="%d" cy="13" r="6"/>`, lx+8)
		case "band":
			fmt.Fprintf(&b, `<rect class="band" x="%d" y="8" width="16" height="10"/>`, lx)
		case "alert":
			fmt.Fprintf(&b, `<g><title>alert: the interval lies wholly beyond the thresholds, or reaches above the upper one while extrapolating</title><circle class="pt alert" cx="%d" cy="13" r="4"/></g>`, lx+8)
		default:
			fmt.Fprintf(&b, `<line class="%s" x1="%d" x2="%d" y1="13" y2="13"/>`, l.cls, lx, lx+16)
		}
		fmt.Fprintf(&b, `<text class="legend" x="%d" y="17">%s</text>`, lx+20, l.label)
		lx += 26 + 6*len(l.label)
	}
	b.WriteString(`</g></svg>`)
	return template.HTML(b.String())
}

// driftChart draws the drift panel of a monitor as an SVG chart: each
// feature's Kolmogorov-Smirnov statistic against the reference per
// chunk (0 to 1), extrapolating chunks shaded, chunks whose
// reconstruction error left its thresholds marked in red (the values are
// in each point's title).
func driftChart(v *monitorsvc.View, width, height int, title string) template.HTML {
	const left, right, top, bottom = 64, 40, 28, 40
	n := len(v.Chunks)
	if n == 0 || v.Drift == nil {
		return ""
	}
	pw, ph := float64(width-left-right), float64(height-top-bottom)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart drift" role="img" viewBox="0 0 %d %d" width="%d" height="%d" xmlns="http://www.w3.org/2000/svg">`, width, height, width, height)
	fmt.Fprintf(&b, `<title>%s</title>`, template.HTMLEscapeString(title))
	x := func(i int) float64 {
		if n == 1 {
			return left + pw/2
		}
		return left + pw*float64(i)/float64(n-1)
	}
	y := func(val float64) float64 { return top + ph*(1-math.Min(math.Max(val, 0), 1)) }
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
	colw := pw / float64(max(1, n-1))
	for i, c := range v.Chunks {
		if c.Drift != nil && c.Drift.Extrapolating {
			// A chunk's column, cut at the plot's edges: the first and
			// last chunks sit on them.
			x0, x1 := math.Max(x(i)-colw/2, left), math.Min(x(i)+colw/2, left+pw)
			fmt.Fprintf(&b, `<rect class="extrap-col" x="%s" y="%d" width="%s" height="%s"><title>chunk %d: extrapolating, %s</title></rect>`,
				f(x0), top, f(x1-x0), f(ph), c.Index, template.HTMLEscapeString(c.Drift.Why(v.Drift, c.Rows())))
		}
	}
	for _, tk := range []float64{0, 0.25, 0.5, 0.75, 1} {
		fmt.Fprintf(&b, `<line class="grid" x1="%d" x2="%s" y1="%s" y2="%s"/>`, left, f(left+pw), f(y(tk)), f(y(tk)))
		fmt.Fprintf(&b, `<text class="tick" x="%d" y="%s" text-anchor="end" dominant-baseline="middle">%s</text>`, left-6, f(y(tk)), formatTick(tk))
	}
	fmt.Fprintf(&b, `<text class="axis" x="14" y="%s" transform="rotate(-90 14 %s)" text-anchor="middle">KS</text>`, f(top+ph/2), f(top+ph/2))
	step := max(1, (n+9)/10)
	for i := 0; i < n; i += step {
		label := strconv.Itoa(v.Chunks[i].Index)
		if p := v.Chunks[i].Period; p != "" {
			label = p
		}
		fmt.Fprintf(&b, `<text class="tick" x="%s" y="%d" text-anchor="middle">%s</text>`, f(x(i)), height-bottom+16, template.HTMLEscapeString(label))
	}
	for j, name := range v.Drift.Features {
		var pts []string
		for i, c := range v.Chunks {
			if c.Drift != nil {
				pts = append(pts, f(x(i))+","+f(y(c.Drift.Features[j].KS)))
			}
		}
		fmt.Fprintf(&b, `<polyline class="ks f%d" points="%s"><title>%s</title></polyline>`, j%4, strings.Join(pts, " "), template.HTMLEscapeString(name))
	}
	for i, c := range v.Chunks {
		if c.Drift == nil {
			continue
		}
		cls := "kspt"
		if c.Drift.DriftAlert {
			cls += " drift"
		}
		worst := 0.0
		for _, fd := range c.Drift.Features {
			worst = math.Max(worst, fd.KS)
		}
		fmt.Fprintf(&b, `<circle class="%s" cx="%s" cy="%s" r="3"><title>chunk %d: reconstruction error %s [%s, %s]%s, %.1f%% of rows out of reference</title></circle>`,
			cls, f(x(i)), f(y(worst)), c.Index, formatNum(c.Drift.ReconstructionError), formatNum(v.DriftTh.Lower), formatNum(v.DriftTh.Upper),
			map[bool]string{true: ", DRIFT", false: ""}[c.Drift.DriftAlert], 100*c.Drift.OutOfReference)
	}
	lx := left + 8
	b.WriteString(`<g class="key">`)
	for j, name := range v.Drift.Features {
		if j >= 6 {
			break
		}
		fmt.Fprintf(&b, `<line class="ks f%d" x1="%d" x2="%d" y1="13" y2="13"/><text class="legend" x="%d" y="17">KS %s</text>`, j%4, lx, lx+16, lx+20, template.HTMLEscapeString(name))
		lx += 40 + 7*len(name)
	}
	fmt.Fprintf(&b, `<rect class="extrap-col" x="%d" y="8" width="16" height="10"/><text class="legend" x="%d" y="17">extrapolating</text>`, lx, lx+20)
	b.WriteString(`</g></svg>`)
	return template.HTML(b.String())
}

// niceTicks returns about k round tick values covering [lo, hi].
func niceTicks(lo, hi float64, k int) []float64 {
	span := hi - lo
	raw := span / float64(k)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	start := math.Floor(lo/step) * step
	var out []float64
	for v := start; v <= hi+step*1e-9 || len(out) < 2; v += step {
		out = append(out, v)
		if len(out) > 20 {
			break
		}
	}
	if out[len(out)-1] < hi {
		out = append(out, out[len(out)-1]+step)
	}
	return out
}

func formatTick(v float64) string { return strconv.FormatFloat(v+0, 'g', 4, 64) }

// formatNum prints a number as the command line's tables do: 6
// significant digits, "–" when undefined.
func formatNum(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	return strconv.FormatFloat(v+0, 'g', 6, 64)
}
