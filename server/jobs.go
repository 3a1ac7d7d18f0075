package server

// Placeholder owned by branch jobsvc, which replaces this file with the
// job runner (package jobrun) and its handlers; see server.go.

import (
	"context"
	"net/http"
)

// JobOptions configure the job runner.
type JobOptions struct{}

type jobsState struct{}

func (s *Server) initJobs(ctx context.Context) error  { return nil }
func (s *Server) closeJobs(ctx context.Context) error { return nil }
func (s *Server) routeJobs(mux *http.ServeMux)        {}
func (s *Server) dashboardJobs(ctx context.Context) ([]JobView, error) {
	return nil, nil
}
