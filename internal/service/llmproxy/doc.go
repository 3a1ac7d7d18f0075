// Package llmproxy is the OpenAI-compatible uncertainty proxy: an
// http.Handler of POST chat completions that passes the caller's request
// to the upstream byte for byte, while k samples of the same messages are
// drawn beside it and scored by package uncertainty (or, for pe and ne,
// package likelihood from their logprobs; the scores of the caller's
// answer read its logprobs too); the answer comes back
// with one added top-level key "genlens" ({"uncertainty", "score",
// "samples"}, or {"error"}) and the header X-Genlens-Uncertainty. A
// stream is passed through event by event; its score goes to the record
// only.
//
// It stands alone, as httputil.ReverseProxy does: every upstream call goes
// through one *llm.Client (its base URL, key, transport and timeout), and
// what the proxy needs of its host comes in through Options: a Recorder
// for the requests (package store's DB is one), an Observe hook for
// metrics, a logger. Authentication is the host's: it wraps the handler,
// answering refusals with WriteError so that client libraries read them.
package llmproxy
