package server

// Placeholder owned by branch jobsvc, which replaces this file with the
// online selections (Hu, Leung & Farnia's FID-UCB/IS-UCB); see server.go.

import (
	"context"
	"net/http"
)

func (s *Server) routeSelections(mux *http.ServeMux) {}
func (s *Server) dashboardSelections(ctx context.Context) ([]SelectionView, error) {
	return nil, nil
}
