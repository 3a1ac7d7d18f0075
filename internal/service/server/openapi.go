package server

import (
	"net/http"

	"github.com/genlens/genlens/deploy"
)

// openAPI serves the API's OpenAPI 3.1 description (deploy/openapi.yaml,
// embedded in the binary), so that clients can be generated from the
// server they talk to.
func (s *Server) openAPI(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/yaml")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Write(deploy.OpenAPI)
}
