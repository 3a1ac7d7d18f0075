package server

import (
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/store/records"
)

// MaxLLMRequestsLimit bounds the limit of GET /api/v1/llm/requests.
const MaxLLMRequestsLimit = 1000

// llmRequestJSON is a stored proxied request as the API lists it.
type llmRequestJSON struct {
	ID              int64     `json:"id"`
	Time            time.Time `json:"time"`
	Model           string    `json:"model"`
	MessagesHash    string    `json:"messages_hash"`
	Answer          string    `json:"answer"`
	Stream          bool      `json:"stream"`
	Status          int       `json:"status"`
	Score           string    `json:"score"`
	Uncertainty     *float64  `json:"uncertainty"` // null when none was computed
	Samples         int       `json:"samples"`
	Error           string    `json:"error,omitempty"`
	UpstreamSeconds float64   `json:"upstream_seconds"`
	SampleSeconds   float64   `json:"sample_seconds"`
	TotalSeconds    float64   `json:"total_seconds"`
}

func llmRequestView(r records.LLMRequest) llmRequestJSON {
	v := llmRequestJSON{ID: r.ID, Time: r.Time, Model: r.Model, MessagesHash: r.MessagesHash, Answer: r.Answer, Stream: r.Stream,
		Status: r.Status, Score: r.Score, Samples: r.Samples, Error: r.Error,
		UpstreamSeconds: r.UpstreamSeconds, SampleSeconds: r.SampleSeconds, TotalSeconds: r.TotalSeconds}
	if !math.IsNaN(r.Uncertainty) {
		u := r.Uncertainty
		v.Uncertainty = &u
	}
	return v
}

// parseLLMQuery reads since (RFC 3339), min_uncertainty, limit and
// order (time, newest first, or uncertainty, highest first).
func parseLLMQuery(r *http.Request) (records.LLMQuery, error) {
	q := records.LLMQuery{MinUncertainty: math.NaN(), Limit: 100}
	v := r.URL.Query()
	if s := v.Get("since"); s != "" {
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return q, fault.Fieldf("since", "{since} %q: want an RFC 3339 time such as 2026-11-26T09:00:00Z", s)
		}
		q.Since = t
	}
	if s := v.Get("min_uncertainty"); s != "" {
		x, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return q, fault.Fieldf("min_uncertainty", "{min_uncertainty} %q: want a finite number", s)
		}
		q.MinUncertainty = x
	}
	if s := v.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > MaxLLMRequestsLimit {
			return q, fault.Fieldf("limit", "{limit} %q: want 1 to %d", s, MaxLLMRequestsLimit)
		}
		q.Limit = n
	}
	switch o := v.Get("order"); o {
	case "", "time":
	case "uncertainty":
		q.ByUncertainty = true
	default:
		return q, fault.Fieldf("order", "{order} %q: want time or uncertainty", o)
	}
	return q, nil
}

// llmRequests serves GET /api/v1/llm/requests.
func (s *Server) llmRequests(w http.ResponseWriter, r *http.Request) {
	q, err := parseLLMQuery(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	rs, err := s.store.LLMRequests(r.Context(), q)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := struct {
		Requests []llmRequestJSON `json:"requests"`
	}{Requests: make([]llmRequestJSON, 0, len(rs))}
	for _, x := range rs {
		out.Requests = append(out.Requests, llmRequestView(x))
	}
	s.writeJSON(w, http.StatusOK, out)
}
