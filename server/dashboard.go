package server

import "net/http"

func (s *Server) routeDashboard(mux *http.ServeMux) {}
