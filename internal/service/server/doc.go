// Package server is the HTTP service behind `genlens serve`: the JSON API
// under /api/v1 (monitors, rows, labels and chunks; jobs, uploads and
// online selections; partial statistics of sharded runs, merged), Prometheus metrics at /metrics, a liveness
// check at /livez (the process serves HTTP), a readiness check at /healthz
// (the store answers, the disk has room) and the dashboard at /.
//
// A monitor watches a deployed regression model with the check model of
// "A One-Step MSE Estimation of Models in Production" (anonymous, under
// review, 2024), the JSON file `genlens mse fit` writes. Each row's
// contribution 2 (h(x) - f(x))² to the estimated MSE is computed once, at
// ingest, and stored; chunks, bands, thresholds and alerts come from
// package monitor's pipeline (monitor.Run) when they are read, exactly as
// `genlens mse estimate` computes them for a file, with each chunk's
// extrapolation and drift when the model file records the reference's
// features. What stands for a monitor (the dashboard's badge and summary,
// /metrics, the summary of GET /api/v1/monitors) is its latest complete
// chunk, with how many of the last complete chunks alerted: the chunk
// still filling holds few rows and would hide an alert. The API is
// described in deploy/openapi.yaml, served at GET /api/v1/openapi.yaml. Jobs run every command of package job through
// package jobrun; online selections follow Hu, Leung & Farnia, "An
// Optimism-based Approach to Online Evaluation of Generative Models",
// arXiv 2024.
//
// With an upstream (Options.LLM), the server also mounts package llmproxy, an OpenAI-compatible
// proxy at /v1/chat/completions: each request goes upstream byte for byte
// and its answer comes back with one added key, "genlens", holding the
// uncertainty of k samples of the same messages drawn beside it through
// package llm, the predictive kernel entropy of Gruber & Buettner, "A
// Bias-Variance-Covariance Decomposition of Kernel Scores for Generative
// Models" (ICML 2024), computed by package uncertainty as `genlens
// entropy` does by default. Streams pass through event by event. Every
// proxied request is stored and listed at /api/v1/llm/requests.
//
// The server keeps no state of its own beyond caches of immutable data:
// everything is in the store (package store), so that several replicas
// can serve one Postgres database. Errors are mapped to statuses in one
// place (writeError): fault.Classify's kinds (400, 422, 499, 500), not
// found 404, a taken name 409, a body over the limit 413, a write that
// failed for want of disk space 507 with Retry-After. With a token (at
// least signin.MinTokenLen characters), every endpoint but /livez, /healthz, /login and
// the stylesheet needs it; /login allows a few attempts per client
// address (429 beyond). The bytes of request bodies decoded at once are
// bounded over every handler (Options.MaxBodiesInFlight; 503 with
// Retry-After when no room is made in time).
package server
