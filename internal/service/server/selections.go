package server

// Online generator selection (Hu, Leung & Farnia, "An Optimism-based
// Approach to Online Evaluation of Generative Models", arXiv 2024): a
// client asks which generator to sample, draws a batch from it, posts the
// batch's features, and asks again.
//
//	POST /api/v1/selections                 {"name", "score": "fid"|"is", "algorithm",
//	                                         "generators": [...], "ref": upload id (fid),
//	                                         "ref_key", "classes" (is), "delta", "bonus_scale",
//	                                         "fid_bonus" (fid: auto, paper, code2024, fducb2025)}
//	                                        → 201 the selection's status
//	GET  /api/v1/selections                 {"selections": [...]}
//	GET  /api/v1/selections/{id}            scores, bonuses and picks per generator
//	GET  /api/v1/selections/{id}/next       {"generator", "index", "step"}
//	POST /api/v1/selections/{id}/samples    {"generator", "features": [[...], ...]}
//	                                        → 200 {"step", "generator", "samples", "next"}

import (
	"context"
	"math"
	"net/http"
)

func (s *Server) routeSelections(mux *http.ServeMux) {
	mux.HandleFunc("POST /api/v1/selections", s.createSelection)
	mux.HandleFunc("GET /api/v1/selections", s.listSelections)
	mux.HandleFunc("GET /api/v1/selections/{id}", s.getSelection)
	mux.HandleFunc("GET /api/v1/selections/{id}/next", s.nextPick)
	mux.HandleFunc("POST /api/v1/selections/{id}/samples", s.postSamples)
}

func (s *Server) createSelection(w http.ResponseWriter, r *http.Request) {
	body, err := s.readBody(w, r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	sel, err := s.jobs.svc.CreateSelection(r.Context(), body)
	if err != nil {
		s.jobError(w, r, err)
		return
	}
	st, err := s.jobs.svc.SelectionStatus(r.Context(), sel.ID)
	if err != nil {
		s.jobError(w, r, err)
		return
	}
	s.setSelectionGauges(st)
	w.Header().Set("Location", "/api/v1/selections/"+sel.ID)
	s.writeJSON(w, http.StatusCreated, st)
}

func (s *Server) listSelections(w http.ResponseWriter, r *http.Request) {
	all, err := s.jobs.svc.Selections(r.Context())
	if err != nil {
		s.jobError(w, r, err)
		return
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"selections": all})
}

func (s *Server) getSelection(w http.ResponseWriter, r *http.Request) {
	st, err := s.jobs.svc.SelectionStatus(r.Context(), r.PathValue("id"))
	if err != nil {
		s.jobError(w, r, err)
		return
	}
	s.writeJSON(w, http.StatusOK, st)
}

func (s *Server) nextPick(w http.ResponseWriter, r *http.Request) {
	next, err := s.jobs.svc.Next(r.Context(), r.PathValue("id"))
	if err != nil {
		s.jobError(w, r, err)
		return
	}
	s.writeJSON(w, http.StatusOK, next)
}

func (s *Server) postSamples(w http.ResponseWriter, r *http.Request) {
	body, err := s.readBody(w, r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	id := r.PathValue("id")
	res, err := s.jobs.svc.AddSamples(r.Context(), id, body)
	if err != nil {
		s.jobError(w, r, err)
		return
	}
	if st, err := s.jobs.svc.SelectionStatus(r.Context(), id); err == nil {
		s.setSelectionGauges(st)
	}
	s.writeJSON(w, http.StatusOK, res)
}

// dashboardSelections lists every selection for the dashboard.
func (s *Server) dashboardSelections(ctx context.Context) ([]SelectionView, error) {
	all, err := s.jobs.svc.Selections(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		s.log.Warn("dashboard: selections left out", "err", err) // the others are shown
	}
	out := make([]SelectionView, 0, len(all))
	for _, st := range all {
		v := SelectionView{ID: st.ID, Name: st.Name, Algorithm: st.Algorithm, Next: st.Next}
		if v.Name == "" {
			v.Name = st.ID
		}
		for _, g := range st.Generators {
			v.Generators = append(v.Generators, GeneratorView{Name: g.Name, Picks: g.Batches, Estimate: orNaN(g.Estimate), Bound: orNaN(g.Index)})
		}
		out = append(out, v)
	}
	return out, nil
}

func orNaN(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}
