// Package llm talks to language models behind OpenAI-compatible HTTP
// endpoints: vLLM, llama.cpp server, Ollama, SGLang and hosted APIs. It
// sends chat completions (/chat/completions), legacy completions
// (/completions) and embeddings (/embeddings), draws n samples of one
// prompt from servers that ignore or cap "n", and carries the transport
// that every genlens client of such a server shares.
//
// # Transport
//
// A Client bounds the requests in flight (Config.Concurrency, across all
// goroutines that share it) and, optionally, their rate (Config.RPM). Each
// attempt is limited by Config.Timeout, from sending the request to
// reading the whole response. Transient failures are retried up to
// Config.MaxRetries times with exponential back-off and jitter, or after
// the server's Retry-After delay when it sends one: HTTP 408, 429 and 5xx,
// timeouts, connection errors, and a response body cut off before its end
// (a connection closed early, a Content-Length not reached). A complete
// response that is not the expected JSON is an error, not a retry: asking
// again rarely mends a wrong URL or an incompatible server. Connections
// are kept alive and reused; redirects are followed only within the
// origin of the base URL, so a prompt or key never goes to another
// server. Response bodies larger than Config.MaxResponseBytes are
// refused. The API key is sent as a bearer token and never appears in an
// error.
//
// # Samples
//
// Sample asks for n choices and, when a server answers fewer (llama.cpp
// server answers one whatever "n" says), asks again for the missing ones
// until there are n. When the request has a seed, every top-up request
// gets a seed of its own, derived from the first, so that the samples are
// reproducible on servers that honour seeds and still differ from each
// other. The finish reason of every choice is kept: a choice that stopped
// at max_tokens ("length") is a valid sample of a length-bounded
// generation and the caller decides what to do with it.
package llm
