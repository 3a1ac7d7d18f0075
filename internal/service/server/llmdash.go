package server

import (
	"context"
	"fmt"
	"html/template"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/store/records"
)

// The dashboard's LLM panel: the uncertainty of the recent proxied
// requests over time, and the most uncertain of the last day.

// llmPanel is what index.html shows of the proxy.
type llmPanel struct {
	Upstream  bool // the proxy is on in this replica
	Score     string
	Samples   int
	Recent    int // requests in the chart
	Chart     template.HTML
	Uncertain []llmRow
}

type llmRow struct {
	Time        string
	Model       string
	Answer      string
	Uncertainty string
	Status      int
	Stream      bool
}

const (
	llmChartRequests = 500 // the newest requests drawn
	llmTopRequests   = 10  // most uncertain requests listed
)

// dashboardLLM returns nil when the proxy is off and nothing is stored.
func (s *Server) dashboardLLM(ctx context.Context) (*llmPanel, error) {
	recent, err := s.store.LLMRequests(ctx, records.LLMQuery{MinUncertainty: math.NaN(), Limit: llmChartRequests})
	if err != nil {
		return nil, err
	}
	if s.llm == nil && len(recent) == 0 {
		return nil, nil
	}
	p := &llmPanel{Upstream: s.llm != nil, Recent: len(recent)}
	if s.llm != nil {
		p.Score, p.Samples = s.llm.Score(), s.llm.Samples()
	}
	top, err := s.store.LLMRequests(ctx, records.LLMQuery{Since: s.now().Add(-24 * time.Hour), MinUncertainty: math.NaN(),
		ByUncertainty: true, Limit: llmTopRequests})
	if err != nil {
		return nil, err
	}
	for _, r := range top {
		p.Uncertain = append(p.Uncertain, llmRow{Time: r.Time.Format("2006-01-02 15:04:05"), Model: r.Model,
			Answer: fault.Printable(strings.Join(strings.Fields(r.Answer), " "), 160), Uncertainty: formatNum(r.Uncertainty),
			Status: r.Status, Stream: r.Stream})
	}
	p.Chart = uncertaintyChart(recent, 1100, 260)
	return p, nil
}

// uncertaintyChart draws the requests' uncertainties against their time
// (oldest left) as an SVG scatter plot; requests without an uncertainty
// are left out.
func uncertaintyChart(rs []records.LLMRequest, width, height int) template.HTML {
	const left, right, top, bottom = 64, 24, 16, 40
	pw, ph := float64(width-left-right), float64(height-top-bottom)
	var pts []records.LLMRequest
	for _, r := range rs {
		if !math.IsNaN(r.Uncertainty) {
			pts = append(pts, r)
		}
	}
	var b strings.Builder
	if len(pts) == 0 {
		height = 60
	}
	fmt.Fprintf(&b, `<svg class="chart llm" role="img" viewBox="0 0 %d %d" width="%d" height="%d" xmlns="http://www.w3.org/2000/svg">`, width, height, width, height)
	b.WriteString(`<title>uncertainty of proxied answers over time</title>`)
	if len(pts) == 0 {
		fmt.Fprintf(&b, `<text x="%d" y="%d" class="empty" text-anchor="middle">no scored requests yet</text></svg>`, width/2, height/2)
		return template.HTML(b.String())
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	t0, t1 := pts[0].Time, pts[0].Time
	for _, r := range pts {
		lo, hi = math.Min(lo, r.Uncertainty), math.Max(hi, r.Uncertainty)
		if r.Time.Before(t0) {
			t0 = r.Time
		}
		if r.Time.After(t1) {
			t1 = r.Time
		}
	}
	if hi-lo < 1e-9 {
		lo, hi = lo-0.5, hi+0.5
	}
	ticks := niceTicks(lo, hi, 5)
	for i, tk := range ticks {
		if math.Abs(tk) < 1e-9*(hi-lo) {
			ticks[i] = 0 // summed steps leave -5.55e-17 where 0 is meant
		}
	}
	lo, hi = math.Min(lo, ticks[0]), math.Max(hi, ticks[len(ticks)-1])
	span := t1.Sub(t0).Seconds()
	x := func(t time.Time) float64 {
		if span <= 0 {
			return left + pw/2
		}
		return left + pw*t.Sub(t0).Seconds()/span
	}
	y := func(v float64) float64 { return top + ph*(1-(v-lo)/(hi-lo)) }
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
	for _, tk := range ticks {
		fmt.Fprintf(&b, `<line class="grid" x1="%d" x2="%s" y1="%s" y2="%s"/>`, left, f(left+pw), f(y(tk)), f(y(tk)))
		fmt.Fprintf(&b, `<text class="tick" x="%d" y="%s" text-anchor="end" dominant-baseline="middle">%s</text>`, left-6, f(y(tk)), formatTick(tk))
	}
	fmt.Fprintf(&b, `<text class="axis" x="14" y="%s" transform="rotate(-90 14 %s)" text-anchor="middle">uncertainty</text>`, f(top+ph/2), f(top+ph/2))
	layout := "15:04:05"
	if span > 24*3600 {
		layout = "01-02 15:04"
	}
	fmt.Fprintf(&b, `<text class="tick" x="%d" y="%d" text-anchor="start">%s</text>`, left, height-bottom+16, t0.Format(layout))
	if span > 0 {
		fmt.Fprintf(&b, `<text class="tick" x="%s" y="%d" text-anchor="end">%s</text>`, f(left+pw), height-bottom+16, t1.Format(layout))
	}
	fmt.Fprintf(&b, `<text class="axis" x="%s" y="%d" text-anchor="middle">time (UTC)</text>`, f(left+pw/2), height-6)
	for _, r := range pts {
		cls := "pt"
		if r.Stream {
			cls += " stream"
		}
		fmt.Fprintf(&b, `<circle class="%s" cx="%s" cy="%s" r="3"><title>%s %s: %s</title></circle>`, cls, f(x(r.Time)), f(y(r.Uncertainty)),
			r.Time.Format("2006-01-02 15:04:05"), template.HTMLEscapeString(r.Model), formatNum(r.Uncertainty))
	}
	// Legend: the colour of streamed requests.
	b.WriteString(`<g class="key">`)
	fmt.Fprintf(&b, `<circle class="pt" cx="%d" cy="%d" r="3"/><text class="legend" x="%d" y="%d">answer</text>`, width-right-150, height-8, width-right-142, height-4)
	fmt.Fprintf(&b, `<circle class="pt stream" cx="%d" cy="%d" r="3"/><text class="legend" x="%d" y="%d">streamed</text>`, width-right-80, height-8, width-right-72, height-4)
	b.WriteString(`</g></svg>`)
	return template.HTML(b.String())
}
