// Package deploy holds the files operators run genlens serve with: the
// OpenAPI 3.1 description of its HTTP API (openapi.yaml, embedded here
// so that the server can serve it at GET /api/v1/openapi.yaml),
// Prometheus alerting rules with their unit tests (prometheus/), a
// Grafana dashboard of the monitor and service metrics (grafana/) and
// Kubernetes manifests (kubernetes/).
package deploy

import _ "embed"

// OpenAPI is deploy/openapi.yaml: every route of the server's API.
//
//go:embed openapi.yaml
var OpenAPI []byte
